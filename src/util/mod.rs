//! Small internal building blocks.

mod cow_map;

pub(crate) use cow_map::CowMap;
