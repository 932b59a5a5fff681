//! Levenberg–Marquardt least squares with a forward-difference Jacobian (nalgebra).
//!
//! Minimises `Σ r_k(θ)²` from a start point. Small problems only (tens of parameters, a few
//! thousand residuals): each iteration evaluates the residuals `P + 1` times.
use nalgebra::{DMatrix, DVector};

/// Settings of one fit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LmConfig {
    /// Most iterations.
    pub max_iterations: usize,
    /// Stop when the cost improves by less than this fraction.
    pub tolerance: f64,
    /// Step of the forward differences.
    pub step: f64,
}

impl Default for LmConfig {
    fn default() -> Self {
        Self {
            max_iterations: 300,
            tolerance: 1e-12,
            step: 1e-6,
        }
    }
}

/// Where the fit ended.
#[derive(Clone, Debug, PartialEq)]
pub struct LmResult {
    /// The parameters.
    pub theta: DVector<f64>,
    /// Sum of squared residuals at `theta`.
    pub cost: f64,
    /// Iterations taken.
    pub iterations: usize,
    /// Whether it stopped on the tolerance (not the iteration limit).
    pub converged: bool,
}

/// Minimises the squared norm of `residuals(θ)` from `start`.
pub fn minimise(
    residuals: &dyn Fn(&DVector<f64>) -> DVector<f64>,
    start: DVector<f64>,
    config: &LmConfig,
) -> LmResult {
    minimise_with(
        residuals,
        &|theta, r| jacobian(residuals, theta, r, config.step),
        start,
        config,
    )
}

/// The Jacobian at (θ, residuals(θ)).
pub type Jacobian<'a> = dyn Fn(&DVector<f64>, &DVector<f64>) -> DMatrix<f64> + 'a;

/// [`minimise`] with the Jacobian at (θ, residuals(θ)) given by `jacobian`: for problems that
/// know which residuals a parameter moves. It must equal the forward differences of
/// [`minimise`] (step `config.step * max(1, |θ_j|)`).
pub fn minimise_with(
    residuals: &dyn Fn(&DVector<f64>) -> DVector<f64>,
    jacobian: &Jacobian<'_>,
    start: DVector<f64>,
    config: &LmConfig,
) -> LmResult {
    let mut theta = start;
    let mut r = residuals(&theta);
    let mut cost = r.norm_squared();
    let mut damping = 1e-3;
    for iteration in 0..config.max_iterations {
        let jacobian = jacobian(&theta, &r);
        let jt = jacobian.transpose();
        let jtj = &jt * &jacobian;
        let gradient = &jt * &r;
        let mut improved = false;
        for _ in 0..30 {
            let mut system = jtj.clone();
            for i in 0..system.nrows() {
                system[(i, i)] += damping * (jtj[(i, i)] + 1e-9);
            }
            let Some(step) = system.cholesky().map(|c| c.solve(&(-&gradient))) else {
                damping *= 10.0;
                continue;
            };
            let candidate = &theta + &step;
            let r_new = residuals(&candidate);
            let cost_new = r_new.norm_squared();
            if cost_new.is_finite() && cost_new < cost {
                let gain = (cost - cost_new) / cost.max(f64::MIN_POSITIVE);
                theta = candidate;
                r = r_new;
                cost = cost_new;
                damping = (damping / 3.0).max(1e-12);
                improved = true;
                if gain < config.tolerance {
                    return LmResult {
                        theta,
                        cost,
                        iterations: iteration + 1,
                        converged: true,
                    };
                }
                break;
            }
            damping *= 4.0;
        }
        if !improved {
            return LmResult {
                theta,
                cost,
                iterations: iteration + 1,
                converged: true,
            };
        }
    }
    LmResult {
        theta,
        cost,
        iterations: config.max_iterations,
        converged: false,
    }
}

/// The forward step of parameter `value`.
pub fn step_of(value: f64, step: f64) -> f64 {
    step * value.abs().max(1.0)
}

fn jacobian(
    residuals: &dyn Fn(&DVector<f64>) -> DVector<f64>,
    theta: &DVector<f64>,
    r: &DVector<f64>,
    step: f64,
) -> DMatrix<f64> {
    let mut jacobian = DMatrix::zeros(r.len(), theta.len());
    for j in 0..theta.len() {
        let mut shifted = theta.clone();
        let h = step_of(theta[j], step);
        shifted[j] += h;
        let column = (residuals(&shifted) - r) / h;
        jacobian.set_column(j, &column);
    }
    jacobian
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_37_the_forward_step_grows_with_the_value_beyond_one() {
        assert_eq!(step_of(4.0, 1e-6), 4e-6);
        assert_eq!(step_of(-8.0, 1e-3), 8e-3);
        assert_eq!(step_of(0.25, 1e-6), 1e-6);
    }

    #[test]
    fn issue_37_an_inert_parameter_neither_stalls_the_fit_nor_moves() {
        // r = (a - 2, a - 4), b unused: the optimum a = 3 leaves cost 1 + 1 = 2. b's column of
        // the Jacobian is zero, so only the small constant on the damped diagonal keeps the
        // system positive definite; b's gradient is zero, so it stays where it started.
        let residuals = |t: &DVector<f64>| DVector::from_vec(vec![t[0] - 2.0, t[0] - 4.0]);
        let fit = minimise(
            &residuals,
            DVector::from_vec(vec![0.0, 5.0]),
            &LmConfig::default(),
        );
        assert!((fit.theta[0] - 3.0).abs() < 1e-6, "{:?}", fit.theta);
        assert_eq!(fit.theta[1], 5.0);
        assert!((fit.cost - 2.0).abs() < 1e-9, "{}", fit.cost);
    }

    #[test]
    fn issue_37_it_stops_on_the_first_step_that_gains_less_than_the_tolerance() {
        // r = (a - 3, 1) from a = 0: cost 10. Step 1 (damping 1e-3) takes a to 3 / 1.001, cost
        // 1 + 9e-6: a gain of 0.9, more than the tolerance 0.5. Step 2 (damping 1e-3 / 3)
        // leaves a - 3 near 1e-6: a gain of 9e-6 of the cost, less than 0.5, so it stops there.
        let residuals = |t: &DVector<f64>| DVector::from_vec(vec![t[0] - 3.0, 1.0]);
        let config = LmConfig {
            tolerance: 0.5,
            ..LmConfig::default()
        };
        let fit = minimise(&residuals, DVector::from_vec(vec![0.0]), &config);
        assert_eq!((fit.iterations, fit.converged), (2, true), "{fit:?}");
        assert!((fit.theta[0] - 3.0).abs() < 1e-5, "{fit:?}");
        assert!((fit.cost - 1.0).abs() < 1e-9, "{fit:?}");
        // With no iterations allowed it returns the start, not converged.
        let none = minimise(
            &residuals,
            DVector::from_vec(vec![0.0]),
            &LmConfig {
                max_iterations: 0,
                ..config
            },
        );
        assert_eq!(
            (none.theta[0], none.cost, none.converged),
            (0.0, 10.0, false)
        );
    }

    #[test]
    fn issue_37_a_rejected_step_quadruples_the_damping_until_one_lowers_the_cost() {
        // r = atan(a) from a = 2: J = 1/5, and a step damped by d goes to
        // a = 2 - atan(2) / (J (1 + d)). d = 1e-3 x 4^k: k = 0..4 (d up to 0.256) land below
        // a = -2.4, where |atan| exceeds atan(2), and are rejected; k = 5 (d = 1.024) lands at
        // 2 - atan(2) / (0.2 x 2.024) = -0.735, which lowers the cost. One iteration stops there.
        let residuals = |t: &DVector<f64>| DVector::from_vec(vec![t[0].atan()]);
        let config = LmConfig {
            max_iterations: 1,
            ..LmConfig::default()
        };
        let fit = minimise(&residuals, DVector::from_vec(vec![2.0]), &config);
        let by_hand = 2.0 - 2f64.atan() / (0.2 * (1.0 + 1.024));
        assert!((fit.theta[0] - by_hand).abs() < 1e-4, "{fit:?} {by_hand}");
        assert_eq!((fit.iterations, fit.converged), (1, false));
    }

    #[test]
    fn recovers_an_exponential_decay_from_noise_free_data() {
        let (a, k) = (3.0, 0.7);
        let xs: Vec<f64> = (0..20).map(|i| f64::from(i) * 0.25).collect();
        let ys: Vec<f64> = xs.iter().map(|x| a * (-k * x).exp()).collect();
        let residuals = |t: &DVector<f64>| {
            DVector::from_iterator(
                xs.len(),
                xs.iter()
                    .zip(&ys)
                    .map(|(x, y)| t[0] * (-t[1] * x).exp() - y),
            )
        };
        let fit = minimise(
            &residuals,
            DVector::from_vec(vec![1.0, 0.1]),
            &LmConfig::default(),
        );
        assert!(
            (fit.theta[0] - a).abs() < 1e-6 && (fit.theta[1] - k).abs() < 1e-6,
            "{:?}",
            fit.theta
        );
        assert!(fit.converged);
    }
}
