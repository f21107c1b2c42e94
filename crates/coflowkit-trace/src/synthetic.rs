//! Synthetic workloads (filled in by the generator module).
