//! One small deterministic random generator for tests, benchmarks and
//! examples: the same seed gives the same sequence on every machine, with
//! no dependency. Not for anything that must be unpredictable (keys,
//! tokens): use the operating system's randomness for those.

/// xorshift64* (Vigna, 2016): 64 bits of state, passes the statistical
/// tests test data needs, and is a handful of instructions.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed` (zero, which xorshift cannot leave,
    /// is replaced by a fixed odd constant).
    pub fn new(seed: u64) -> Rng {
        Rng(if seed == 0 {
            0x9e37_79b9_7f4a_7c15
        } else {
            seed
        })
    }

    /// Seeded from the clock: a different sequence every run (for tests
    /// that want variety, such as random kill delays).
    pub fn from_clock() -> Rng {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(7);
        Rng::new(nanos | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n` (`n` > 0; the slight modulo bias is irrelevant
    /// for test data).
    pub fn below(&mut self, n: usize) -> usize {
        assert!(n > 0, "Rng::below(0)");
        (self.next_u64() % n as u64) as usize
    }

    /// A float in `[-1, 1)`.
    pub fn signed_unit(&mut self) -> f32 {
        // The top 24 bits: every value exactly representable in an f32.
        let x = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        2.0 * x - 1.0
    }

    /// One of `items` (not empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn same_seed_same_sequence_and_values_in_range() {
        let (mut a, mut b) = (Rng::new(42), Rng::new(42));
        let mut seen = [false; 7];
        for _ in 0..1000 {
            assert_eq!(a.next_u64(), b.next_u64());
            let i = a.below(7);
            b.below(7);
            seen[i] = true;
            let f = a.signed_unit();
            b.signed_unit();
            assert!((-1.0..1.0).contains(&f));
        }
        assert!(seen.iter().all(|s| *s), "every value of below(7) comes up");
        assert_ne!(Rng::new(1).next_u64(), Rng::new(2).next_u64());
        // Zero is no fixed point.
        let mut z = Rng::new(0);
        assert_ne!(z.next_u64(), z.next_u64());
    }
}
