// The C++ form of roi.c for the tests of regions of interest: a set-up
// phase, a kernel (a member function in a namespace, for --start-at by its
// C++ name) and a tail; -DROI_MARKED and -DROI_KERNEL_ONLY as in roi.c.
#include <locprof/roi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace roi {

struct Grid {
	std::vector<double> cells;
	explicit Grid(std::size_t n) : cells(n) {}
	__attribute__((noinline)) double relax(int sweeps);
};

double Grid::relax(int sweeps)
{
	double s = 0;

	for (std::size_t i = 0; i < cells.size(); i++)
		cells[i] = (double)i;
	for (int r = 0; r < sweeps; r++)
		for (std::size_t i = 1; i + 1 < cells.size(); i++)
			cells[i] = 0.5 * cells[i] + 0.25 * (cells[i - 1] + cells[i + 1]);
	for (double c : cells)
		s += c;
	return s;
}

__attribute__((noinline)) double setup(std::vector<double> &big)
{
	unsigned long x = 88172645463325252ul;
	double s = 0;

	for (std::size_t i = 0; i < big.size(); i++)
		big[i] = (double)(i & 255);
	for (std::size_t i = 0; i < big.size(); i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		s += big[x & (big.size() - 1)];
	}
	return s;
}

__attribute__((noinline)) double tail(const std::vector<double> &big)
{
	double s = 0;

	for (double b : big)
		s += b;
	return s;
}

} // namespace roi

int main(int argc, char **argv)
{
	int sweeps = argc > 1 ? std::atoi(argv[1]) : 40;
	double s = 0;
	roi::Grid g(3072); // 24 KiB
#ifndef ROI_KERNEL_ONLY
	std::vector<double> big(1 << 20); // 8 MiB
	s += roi::setup(big);
#endif
#ifdef ROI_MARKED
	locprof_start();
#endif
	s += g.relax(sweeps);
#ifdef ROI_MARKED
	locprof_stop();
#endif
#ifndef ROI_KERNEL_ONLY
	s += roi::tail(big);
#endif
	std::printf("%.1f\n", s);
	return 0;
}
