//! Small internal building blocks.

mod cow_map;
mod per_thread;

pub(crate) use cow_map::CowMap;
pub(crate) use per_thread::{Padded, SHARDS, ShardedArc, shard};
