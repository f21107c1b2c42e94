//! The policies, one file each, and the registry: the list of their specs. Adding a
//! policy is its file, its docs/policies page, and one line here.

/// Declares each policy module and lists its specs, in catalogue order:
/// `module => SPEC` (or several specs of one module).
macro_rules! registry {
    ($($module:ident => $($spec:ident),+;)*) => {
        $(pub mod $module;)*
        /// Every policy, in catalogue order.
        pub static REGISTRY: &[&crate::spec::PolicySpec] = &[$($(&$module::$spec),+),*];
    };
}

registry! {
    fair => SPEC;
    pfp => SPEC;
    fifo => SPEC;
    keyed => SCF, NCF, TCF;
    varys => SPEC;
    aalo => SPEC;
    sincronia => SPEC;
    ncdrf => SPEC;
    psp => SPEC;
    drf => SPEC;
    hug => SPEC;
    coflex => SPEC;
    naive_tradeoff => SPEC;
    mcs => SPEC;
    pias => SPEC;
    spq => SPEC;
    baraat => SPEC;
    stream => SPEC;
    coda => SPEC;
    lcof => SPEC;
}
