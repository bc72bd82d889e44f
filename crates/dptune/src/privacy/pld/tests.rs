use super::*;

fn cfg() -> PldConfig {
    PldConfig::default()
}

#[test]
fn single_gaussian_matches_balle_wang() {
    // σ = 2, Δ = 1, δ = 1e-5: the exact ε of one Gaussian.
    let p = Pld::gaussian(2.0, 1.0, Neighbours::AddRemove, cfg()).unwrap();
    let exact = crate::privacy::gaussian::gaussian_epsilon(2.0, 1.0, 1e-5).unwrap();
    let e = p.epsilon(1e-5).unwrap();
    assert!(e >= exact * (1.0 - 1e-9) && e <= exact * (1.0 + 1e-4), "{e} vs {exact}");
}
