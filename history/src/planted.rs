//! Planted (legacy) bugs: switches that restore the behaviour a seed document reports as a bug.
//!
//! Every catalog ID in `docs/catalog.md` has one. The switches exist only when the crate is built
//! with the `planted` cargo feature, which production builds leave off; without it [`Planted`] is a
//! zero-sized value whose [`Planted::is`] is a constant `false`, so the legacy paths compile away.
//!
//! A switch is passed explicitly (in options structs), never read from a global, so two simulations
//! in one process can run with different bugs and a seed's behaviour depends on nothing else.

use std::fmt;
use std::str::FromStr;

/// Declares the catalog once: the enum, [`BugId::ALL`] and the spellings all come from this
/// one list, so an ID added here is everywhere at once (the catalog test then asks for its row
/// in `docs/catalog.md`, its scenario file and its checker rule).
macro_rules! catalog {
    ($($id:ident),+ $(,)?) => {
        /// A catalog ID (`docs/catalog.md`). Invariant violations, planted bugs, scenarios and
        /// reports all name defects by it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum BugId {
            $($id),+
        }

        impl BugId {
            /// Every catalog ID, in catalog order.
            pub const ALL: [BugId; [$(stringify!($id)),+].len()] = [$(BugId::$id),+];

            /// The catalog spellings, in the order of [`BugId::ALL`].
            const NAMES: [&'static str; [$(stringify!($id)),+].len()] = [$(stringify!($id)),+];
        }
    };
}

catalog! {
    P1, P2, P3, P4, P5, P6, P7, P8, P9, P10, P11, P12,
    P13, P14, P15, P16, R1, R2, R3, R4, R5, R6, R7, R8, R9, R10,
    R11, R12, R13, R14, R15, R16, R17, R18, R19, R20, R21, R22,
    R23, R24, R25, R26, R27, R28, R29, R30,
    R31, J1, J2, J3, J4, J5, J6, J7, J8, J9, J10,
    J11, J12, J13, J14, J15, J16, J17, J18, J19, J20, J21, J22,
    M1, M2, M3, M4, M5, M6,
}

impl BugId {
    /// The catalog spelling, e.g. `"P4"`.
    pub fn as_str(self) -> &'static str {
        BugId::NAMES[self as usize]
    }

    /// The family: `'P'` (display history), `'R'` (run events), `'J'` (journal and spool) or
    /// `'M'` (the web client's merge of live stream, history pages and resets).
    pub fn family(self) -> char {
        self.as_str().as_bytes()[0] as char
    }

    /// The catalog's ranges, family by family: `P1..P16, R1..R31, J1..J22, M1..M6`.
    fn ranges() -> String {
        let mut ranges: Vec<(BugId, BugId)> = Vec::new();
        for id in BugId::ALL {
            match ranges.last_mut() {
                Some((_, last)) if last.family() == id.family() => *last = id,
                _ => ranges.push((id, id)),
            }
        }
        let spelled: Vec<String> = ranges
            .iter()
            .map(|(first, last)| format!("{first}..{last}"))
            .collect();
        spelled.join(", ")
    }
}

impl fmt::Display for BugId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error for a string that is not a catalog ID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownBugId(pub String);

impl fmt::Display for UnknownBugId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not a catalog ID (expected one of {})",
            self.0,
            BugId::ranges()
        )
    }
}

impl std::error::Error for UnknownBugId {}

impl FromStr for BugId {
    type Err = UnknownBugId;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_uppercase();
        BugId::ALL
            .iter()
            .copied()
            .find(|id| id.as_str() == wanted)
            .ok_or_else(|| UnknownBugId(s.to_string()))
    }
}

impl serde::Serialize for BugId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for BugId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Which planted bug (if any) is switched on. Copy it into every options struct that has a
/// legacy path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Planted {
    #[cfg(feature = "planted")]
    active: Option<BugId>,
}

impl Planted {
    /// The production setting: every legacy path off.
    pub const fn none() -> Self {
        Planted {
            #[cfg(feature = "planted")]
            active: None,
        }
    }

    /// Switch one planted bug on. Only exists with the `planted` feature.
    #[cfg(feature = "planted")]
    pub const fn only(id: BugId) -> Self {
        Planted { active: Some(id) }
    }

    /// `Planted::only(id)` when `id` is some, else `Planted::none()`.
    #[cfg(feature = "planted")]
    pub const fn from_option(id: Option<BugId>) -> Self {
        Planted { active: id }
    }

    /// Whether the legacy behaviour of `id` is switched on. Always `false` without the feature.
    #[inline]
    pub fn is(self, id: BugId) -> bool {
        #[cfg(feature = "planted")]
        {
            self.active == Some(id)
        }
        #[cfg(not(feature = "planted"))]
        {
            let _ = id;
            false
        }
    }

    /// The active planted bug, if any.
    pub fn active(self) -> Option<BugId> {
        #[cfg(feature = "planted")]
        {
            self.active
        }
        #[cfg(not(feature = "planted"))]
        {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_through_their_catalog_spelling() {
        for id in BugId::ALL {
            assert_eq!(id.as_str().parse::<BugId>(), Ok(id));
            assert_eq!(format!("{id}"), id.as_str());
        }
        assert_eq!("p10".parse::<BugId>(), Ok(BugId::P10));
        assert!("P17".parse::<BugId>().is_err());
        assert!("".parse::<BugId>().is_err());
    }

    #[test]
    fn families_follow_the_catalog() {
        assert_eq!(BugId::P14.family(), 'P');
        assert_eq!(BugId::R1.family(), 'R');
        assert_eq!(BugId::J19.family(), 'J');
        assert_eq!(
            BugId::ALL.iter().filter(|id| id.family() == 'P').count(),
            16
        );
        assert_eq!(
            BugId::ALL.iter().filter(|id| id.family() == 'R').count(),
            31
        );
        assert_eq!(
            BugId::ALL.iter().filter(|id| id.family() == 'J').count(),
            22
        );
        assert_eq!(BugId::M2.family(), 'M');
        assert_eq!(BugId::ALL.iter().filter(|id| id.family() == 'M').count(), 6);
    }

    #[test]
    fn an_unknown_id_is_answered_with_the_catalogs_ranges() {
        let e = "R99".parse::<BugId>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "`R99` is not a catalog ID (expected one of P1..P16, R1..R31, J1..J22, M1..M6)"
        );
    }

    #[test]
    fn none_switches_nothing_on() {
        for id in BugId::ALL {
            assert!(!Planted::none().is(id));
        }
    }

    #[cfg(feature = "planted")]
    #[test]
    fn only_switches_exactly_one_on() {
        let p = Planted::only(BugId::P4);
        assert!(p.is(BugId::P4));
        assert!(!p.is(BugId::P5));
        assert_eq!(p.active(), Some(BugId::P4));
    }
}
