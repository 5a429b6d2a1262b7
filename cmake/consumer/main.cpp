#include <vernier.hpp>

#include <cmath>

int main(int argc, char** argv) {
    double x = 4.2;
    vernier::bench("sqrt", [&] { return std::sqrt(x); });
    return vernier::main(argc, argv);
}
