//! colo-sim's one integration-test binary: one module per area.

mod trace;
