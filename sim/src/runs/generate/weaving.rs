//! What every weave of further calls into a seed's ops reads: the runs and the options.

use crate::runs::options::RunsOptions;
use crate::runs::scenario::RunSpec;

/// The runs a weave's calls act on, and the options that say how often each call comes.
#[derive(Clone, Copy)]
pub struct Weaving<'a> {
    pub runs: &'a [RunSpec],
    pub options: &'a RunsOptions,
}
