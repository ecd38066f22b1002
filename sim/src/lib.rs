pub mod crash;
pub mod disk;
