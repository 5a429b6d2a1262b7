// The experiments of Hadrien Grasland's talk "Micro-benchmarking de précision" (2020;
// docs/experiments.md), as vernier benchmarks.
//
// - "rand": the talk's first subject, std::rand(). Its result passes the barrier.
// - "sqrt no barrier": std::sqrt(4.2) with its result thrown away and a constant input. The
//   compiler computes nothing at run time (the talk's objdump shows only the two clock
//   reads): vernier measures the bare loop and flags "optimized away?".
// - "sqrt": the same with the input and the result behind the barrier (the talk's
//   assume_accessed / bench_iter): a real sqrtsd per iteration.
// - the talk's closing table: add, mul, div, sqrt, exp, ln, sin, atan on a double behind the
//   barrier.
//
// Standalone: ./arithmetic [FILTER] [--time S]. Full analysis: vernier run -- ./arithmetic

#include "vernier.hpp"

#include <cmath>
#include <cstdlib>

int main(int argc, char** argv) {
    vernier::bench("rand", [] { return std::rand(); });

    // No barrier: the call has no used result and no side effect, so it is removed.
    vernier::bench("sqrt no barrier", [] { std::sqrt(4.2); });

    // The inputs live in main and are captured by reference: the barrier on the lambda makes
    // the compiler reload them on every iteration, the barrier on the result keeps the work.
    double x = 4.2;
    double y = 1.3;
    vernier::bench("sqrt", [&] { return std::sqrt(x); });

    vernier::bench("add", [&] { return x + y; });
    vernier::bench("mul", [&] { return x * y; });
    vernier::bench("div", [&] { return x / y; });
    vernier::bench("exp", [&] { return std::exp(x); });
    vernier::bench("ln", [&] { return std::log(x); });
    vernier::bench("sin", [&] { return std::sin(x); });
    vernier::bench("atan", [&] { return std::atan(x); });

    return vernier::main(argc, argv);
}
