//! Outward rounding of single operations: the building blocks of "privacy arithmetic rounds
//! up" (DESIGN rule 2), used by every conversion, composition and calibration. They sit here,
//! below `privacy`, so that every module can round without importing the conversions.

/// Rounds a non-negative privacy parameter up by one unit in the last place, so that float
/// rounding in the formula that produced it cannot make it smaller than the exact value.
pub fn round_up(x: f64) -> f64 {
    if x.is_finite() && x > 0.0 {
        x.next_up()
    } else {
        x
    }
}

/// `a + b` rounded up: the float sum, moved up one ulp only when it fell below the exact sum
/// (detected exactly with Knuth's TwoSum).
pub fn add_up(a: f64, b: f64) -> f64 {
    let s = a + b;
    if !s.is_finite() {
        return s;
    }
    let bb = s - a;
    let err = (a - (s - bb)) + (b - bb);
    if err > 0.0 {
        s.next_up()
    } else {
        s
    }
}

/// `a · b` rounded up: the float product, moved up one ulp only when it fell below the exact
/// product (the residual is computed exactly with a fused multiply-add).
pub fn mul_up(a: f64, b: f64) -> f64 {
    let p = a * b;
    if !p.is_finite() {
        return p;
    }
    if a.mul_add(b, -p) > 0.0 {
        p.next_up()
    } else {
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_numbers() {
        assert_eq!(add_up(1.0, 1.0), 2.0);
        assert_eq!(add_up(0.1, 0.2), 0.30000000000000004); // exact sum is below this float
        assert_eq!(add_up(1.0, 1e-17), 1.0f64.next_up());
        assert_eq!(mul_up(0.1, 3.0), 0.30000000000000004);
        assert_eq!(mul_up(1.0 / 3.0, 3.0), 1.0);
        assert_eq!(round_up(1.0), 1.0f64.next_up());
        assert_eq!(round_up(0.0), 0.0);
    }
}
