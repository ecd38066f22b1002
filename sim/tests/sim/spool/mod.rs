//! The request spool against the independent oracle (J14): generated histories, both shapes.

mod bytes;
mod strategies;
