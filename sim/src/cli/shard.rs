//! `--shard K/N` or `--shard auto`: which disjoint share of a campaign's seeds this process runs.
//!
//! `auto` lets one command line serve a whole fleet: each machine reads its own index (and, where
//! the engine says it, the count) from the environment its job engine sets. A Kubernetes Indexed
//! Job sets only the index (`JOB_COMPLETION_INDEX`), so the count comes from `--shard-count`
//! (the Job's `completions`). An index without a count, or an index outside the count, is a usage
//! error naming the variable: a fleet with a wrong share would silently skip or repeat seeds.

use super::args::parse_shard;

/// What `--shard` says before the environment is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ShardSpec {
    /// `K/N` given on the command line.
    Fixed { index: u64, count: u64 },
    /// `auto`: from the job engine's environment.
    Auto,
}

/// `K/N` or `auto`.
pub(crate) fn parse_shard_spec(s: &str) -> Result<ShardSpec, String> {
    if s == "auto" {
        return Ok(ShardSpec::Auto);
    }
    parse_shard(s)
        .map(|(index, count)| ShardSpec::Fixed { index, count })
        .map_err(|e| format!("{e}, or auto"))
}

/// One job engine's variables: where its index and count are, and whether the index counts from
/// one.
struct Engine {
    name: &'static str,
    index: &'static str,
    count: Option<&'static str>,
    index_from_one: bool,
}

/// The engines `auto` knows, in the order they are tried (histsim's own pair first, so a user
/// can always override what an engine sets).
const ENGINES: &[Engine] = &[
    Engine {
        name: "histsim",
        index: "HISTSIM_SHARD_INDEX",
        count: Some("HISTSIM_SHARD_COUNT"),
        index_from_one: false,
    },
    Engine {
        name: "a Kubernetes Indexed Job",
        index: "JOB_COMPLETION_INDEX",
        count: None,
        index_from_one: false,
    },
    Engine {
        name: "GitLab CI parallel",
        index: "CI_NODE_INDEX",
        count: Some("CI_NODE_TOTAL"),
        index_from_one: true,
    },
    Engine {
        name: "CircleCI parallelism",
        index: "CIRCLE_NODE_INDEX",
        count: Some("CIRCLE_NODE_TOTAL"),
        index_from_one: false,
    },
    Engine {
        name: "Buildkite parallelism",
        index: "BUILDKITE_PARALLEL_JOB",
        count: Some("BUILDKITE_PARALLEL_JOB_COUNT"),
        index_from_one: false,
    },
];

/// A shard as the campaign runs it, with where it came from (printed in the header).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Shard {
    pub(crate) index: u64,
    pub(crate) count: u64,
    pub(crate) source: String,
}

/// Resolves `--shard` with `--shard-count` against an environment (`env` reads one variable;
/// passed in so that tests need not change the process's environment).
pub(crate) fn resolve(
    spec: Option<ShardSpec>,
    count_flag: Option<u64>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Shard>, String> {
    match spec {
        None if count_flag.is_some() => Err("--shard-count needs --shard auto".into()),
        None => Ok(None),
        Some(ShardSpec::Fixed { .. }) if count_flag.is_some() => {
            Err("--shard-count is for --shard auto; --shard K/N already names the count".into())
        }
        Some(ShardSpec::Fixed { index, count }) => Ok(Some(Shard {
            index,
            count,
            source: "--shard".into(),
        })),
        Some(ShardSpec::Auto) => from_environment(count_flag, env).map(Some),
    }
}

fn from_environment(
    count_flag: Option<u64>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Shard, String> {
    let set = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let Some((engine, raw_index)) = ENGINES.iter().find_map(|e| set(e.index).map(|v| (e, v)))
    else {
        let names: Vec<&str> = ENGINES.iter().map(|e| e.index).collect();
        return Err(format!(
            "--shard auto: none of {} is set; run under a job engine that sets one, or give --shard K/N",
            names.join(", ")
        ));
    };
    let number = |name: &str, raw: &str| -> Result<u64, String> {
        raw.trim()
            .parse()
            .map_err(|_| format!("--shard auto: {name}={raw:?} is not a number"))
    };
    let mut index = number(engine.index, &raw_index)?;
    if engine.index_from_one {
        index = index
            .checked_sub(1)
            .ok_or_else(|| format!("--shard auto: {}=0, but it counts from 1", engine.index))?;
    }
    let (count, count_from) = match (
        count_flag,
        engine.count.and_then(|c| set(c).map(|v| (c, v))),
    ) {
        (Some(n), _) => (n, "--shard-count".to_string()),
        (None, Some((name, raw))) => (number(name, &raw)?, name.to_string()),
        (None, None) => {
            return Err(format!(
                "--shard auto: {} gives the index ({}) but not the count; add --shard-count N",
                engine.name, engine.index
            ))
        }
    };
    if count == 0 || index >= count {
        return Err(format!(
            "--shard auto: index {index} (from {}) is not below the count {count} (from {count_from})",
            engine.index
        ));
    }
    Ok(Shard {
        index,
        count,
        source: format!(
            "{} ({}, count from {count_from})",
            engine.name, engine.index
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        }
    }

    fn auto(
        count_flag: Option<u64>,
        pairs: &'static [(&'static str, &'static str)],
    ) -> Result<(u64, u64), String> {
        resolve(Some(ShardSpec::Auto), count_flag, &env_of(pairs))
            .map(|s| s.map(|s| (s.index, s.count)).expect("a shard"))
    }

    #[test]
    fn a_kubernetes_indexed_job_gives_the_index_and_the_flag_the_count() {
        assert_eq!(auto(Some(4), &[("JOB_COMPLETION_INDEX", "3")]), Ok((3, 4)));
        let e = auto(None, &[("JOB_COMPLETION_INDEX", "3")]).unwrap_err();
        assert!(e.contains("--shard-count"), "{e}");
        let e = auto(Some(3), &[("JOB_COMPLETION_INDEX", "3")]).unwrap_err();
        assert!(e.contains("not below the count 3"), "{e}");
    }

    #[test]
    fn ci_engines_give_both_and_gitlab_counts_from_one() {
        assert_eq!(
            auto(None, &[("CI_NODE_INDEX", "1"), ("CI_NODE_TOTAL", "2")]),
            Ok((0, 2))
        );
        assert!(auto(None, &[("CI_NODE_INDEX", "0"), ("CI_NODE_TOTAL", "2")]).is_err());
        assert_eq!(
            auto(
                None,
                &[("CIRCLE_NODE_INDEX", "1"), ("CIRCLE_NODE_TOTAL", "2")]
            ),
            Ok((1, 2))
        );
        assert_eq!(
            auto(
                None,
                &[
                    ("BUILDKITE_PARALLEL_JOB", "0"),
                    ("BUILDKITE_PARALLEL_JOB_COUNT", "5")
                ]
            ),
            Ok((0, 5))
        );
    }

    #[test]
    fn histsims_own_pair_comes_first_and_the_flag_overrides_a_count() {
        let both: &'static [(&'static str, &'static str)] = &[
            ("HISTSIM_SHARD_INDEX", "2"),
            ("HISTSIM_SHARD_COUNT", "3"),
            ("JOB_COMPLETION_INDEX", "0"),
        ];
        assert_eq!(auto(None, both), Ok((2, 3)));
        assert_eq!(auto(Some(7), both), Ok((2, 7)));
    }

    #[test]
    fn nothing_set_or_garbage_is_an_error_naming_the_variables() {
        let e = auto(None, &[]).unwrap_err();
        assert!(e.contains("JOB_COMPLETION_INDEX"), "{e}");
        let e = auto(Some(2), &[("JOB_COMPLETION_INDEX", "x")]).unwrap_err();
        assert!(
            e.contains("JOB_COMPLETION_INDEX=\"x\" is not a number"),
            "{e}"
        );
    }

    #[test]
    fn fixed_shards_and_a_stray_count_flag() {
        assert_eq!(parse_shard_spec("auto"), Ok(ShardSpec::Auto));
        assert_eq!(
            parse_shard_spec("1/4"),
            Ok(ShardSpec::Fixed { index: 1, count: 4 })
        );
        assert!(parse_shard_spec("auto/2").unwrap_err().contains("or auto"));
        let none = env_of(&[]);
        assert!(resolve(None, Some(2), &none).is_err());
        assert!(resolve(
            Some(ShardSpec::Fixed { index: 0, count: 2 }),
            Some(2),
            &none
        )
        .is_err());
        assert_eq!(resolve(None, None, &none), Ok(None));
    }
}
