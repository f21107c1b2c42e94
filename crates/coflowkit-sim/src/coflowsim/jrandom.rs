//! `java.util.Random`, as its documentation specifies it: a 48-bit linear
//! congruential generator (multiplier 0x5DEECE66D, increment 0xB) whose
//! `nextDouble()` joins 26 and 27 high bits. CoflowSim draws its deadline
//! multipliers from `new Random(17)`, and its backfill order follows them.

const MULT: u64 = 0x5_DEEC_E66D;
const MASK: u64 = (1 << 48) - 1;

pub struct JavaRandom {
    seed: u64,
}

impl JavaRandom {
    pub fn new(seed: i64) -> Self {
        JavaRandom {
            seed: (seed as u64 ^ MULT) & MASK,
        }
    }

    fn next(&mut self, bits: u32) -> u64 {
        self.seed = (self.seed.wrapping_mul(MULT).wrapping_add(0xB)) & MASK;
        self.seed >> (48 - bits)
    }

    /// Uniform in [0, 1) on the 2^-53 grid.
    pub fn next_double(&mut self) -> f64 {
        let hi = self.next(26);
        let lo = self.next(27);
        ((hi << 27) + lo) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_jdk() {
        // Printed by OpenJDK 17: Double.doubleToLongBits(new Random(17).nextDouble()), ×5,
        // and the first draw of new Random(-3).
        let want = [
            4604771295268052758u64,
            4604456574398245730,
            4590642038465006432,
            4605527223899368385,
            4586557508767087712,
        ];
        let mut r = JavaRandom::new(17);
        for w in want {
            assert_eq!(r.next_double().to_bits(), w);
        }
        assert_eq!(
            JavaRandom::new(-3).next_double().to_bits(),
            4598513232391723936
        );
    }
}
