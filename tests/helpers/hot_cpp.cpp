// SPDX-License-Identifier: MIT
// A C++ program for the CPU stack samples' names (tests/test-stacks.c):
// it spends its CPU time in pp_demo::Kernel<float>::run(double), a name the
// report must show demangled.
#include <cstdlib>
#include <ctime>

namespace pp_demo {

static double cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

volatile double sink;

template <typename T> struct Kernel {
  __attribute__((noinline)) static void run(double seconds) {
    double end = cpu_s() + seconds;
    T x = 1;
    while (cpu_s() < end)
      for (int i = 0; i < 2000; i++)
        x = x * T(1.0000001) + T(1e-9);
    sink = double(x);
  }
};

template struct Kernel<float>;

} // namespace pp_demo

int main(int argc, char **argv) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 0.5;
  if (!(seconds > 0 && seconds < 60))
    seconds = 0.5;
  pp_demo::Kernel<float>::run(seconds);
  return 0;
}
