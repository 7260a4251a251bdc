//! Frame orders for ablations: [`Order`] and [`arrange`] (shuffled with a recorded seed and
//! permutation, reversed, or only the last frame), and the fully specified random numbers
//! behind the shuffle ([`SplitMix64`], [`shuffle_permutation`]), which give the same
//! permutation on every machine and in every language.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::UnknownName;

/// How to order the sampled frames (for ablations).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// As sampled (ascending time).
    #[default]
    Ordered,
    /// A seeded random permutation (`shuffle_permutation`).
    Shuffled,
    /// Descending time.
    Reversed,
    /// Only the last sampled frame.
    Last,
}

impl Order {
    /// Every order, in the order of [`Order::NAMES`].
    pub const ALL: [Order; 4] = [
        Order::Ordered,
        Order::Shuffled,
        Order::Reversed,
        Order::Last,
    ];
    /// The names accepted by [`FromStr`] (and written in JSON).
    pub const NAMES: [&'static str; 4] = ["ordered", "shuffled", "reversed", "last"];

    /// The order's name (`ordered`, `shuffled`, `reversed`, `last`).
    pub fn name(self) -> &'static str {
        Order::NAMES[Order::ALL.iter().position(|o| *o == self).unwrap()]
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Order {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Order, UnknownName> {
        Order::NAMES
            .iter()
            .position(|n| *n == s)
            .map(|i| Order::ALL[i])
            .ok_or_else(|| UnknownName {
                what: "order",
                got: s.to_string(),
                valid: Order::NAMES.join(", "),
            })
    }
}

/// Sampled frames put in an order (`frames.json`'s `order`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Arranged {
    /// The frame indices in presentation order: `indices[j] = input[permutation[j]]`.
    pub indices: Vec<usize>,
    /// For each output position, the position in the input it came from (record it to
    /// reproduce or undo the order).
    pub permutation: Vec<usize>,
    /// The order applied.
    pub order: Order,
    /// The seed used (only meaningful for [`Order::Shuffled`]).
    pub seed: u64,
}

/// Reorders sampled `indices` as `order` says; `seed` drives [`Order::Shuffled`] and is
/// ignored otherwise. [`Order::Last`] keeps only the last element (nothing for empty input).
pub fn arrange(indices: &[usize], order: Order, seed: u64) -> Arranged {
    let n = indices.len();
    let permutation: Vec<usize> = match order {
        Order::Ordered => (0..n).collect(),
        Order::Shuffled => shuffle_permutation(n, seed),
        Order::Reversed => (0..n).rev().collect(),
        Order::Last => n.checked_sub(1).into_iter().collect(),
    };
    Arranged {
        indices: permutation.iter().map(|&p| indices[p]).collect(),
        permutation,
        order,
        seed,
    }
}

/// SplitMix64 (Steele, Lea & Flood 2014; the reference `splitmix64.c` by Vigna): the state
/// advances by `0x9E3779B97F4A7C15` and each output is the state mixed by
/// `z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9; z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
/// z ^ (z >> 31)` (wrapping arithmetic). Fully specified, so a seed gives the same stream on
/// every machine and in every language.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// The generator whose state starts at `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next output: the state advanced by `0x9E3779B97F4A7C15`, then mixed.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..bound` (`bound > 0`) without modulo bias: draws are rejected while
    /// `r < (2^64 - bound) % bound`, then `r % bound` is returned.
    pub fn below(&mut self, bound: u64) -> u64 {
        assert!(bound > 0);
        let threshold = bound.wrapping_neg() % bound;
        loop {
            let r = self.next_u64();
            if r >= threshold {
                return r % bound;
            }
        }
    }
}

/// The permutation of `0..n` for `seed`: Fisher–Yates (Durstenfeld) from the end,
/// `for i in (1..n).rev() { j = rng.below(i + 1); p.swap(i, j) }`, starting from the identity,
/// with [`SplitMix64`] seeded by `seed`.
pub fn shuffle_permutation(n: usize, seed: u64) -> Vec<usize> {
    let mut rng = SplitMix64::new(seed);
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        p.swap(i, j);
    }
    p
}
