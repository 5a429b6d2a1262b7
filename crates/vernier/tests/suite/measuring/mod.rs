mod compare_chain;
mod counters_software;
mod suite_counters;
