// A C++17 program for the naming of functions and heap objects: standard
// containers, std::sort, a thread and an exception, with its own code in
// a namespace. tests/cli/test-names.sh profiles it with and without -g.
#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace geo {

struct point {
	double x, y;
};

// The big heap objects: each is allocated here, through std::allocator
// and operator new (not inlined, so that a build without -g names it too).
__attribute__((noinline)) std::vector<point> make_points(size_t n)
{
	std::vector<point> v;
	for (size_t i = 0; i < n; i++)
		v.push_back({ double((i * 7919) % n), double(i) });
	return v;
}

__attribute__((noinline)) double sweep(const std::vector<point> &v, int rounds)
{
	double s = 0;
	for (int r = 0; r < rounds; r++)
		for (size_t i = 0; i < v.size(); i += 8)
			s += v[i].x * v[(i * 13) % v.size()].y;
	return s;
}

} // namespace geo

static void check(size_t n)
{
	if (n == 0)
		throw std::invalid_argument("empty");
}

int main()
{
	const size_t n = 1 << 17; // 2 MiB of points
	std::vector<geo::point> pts = geo::make_points(n);
	std::sort(pts.begin(), pts.end(), [](const geo::point &a, const geo::point &b) { return a.x < b.x; });
	std::map<std::string, int> names;
	for (int i = 0; i < 200; i++)
		names["k" + std::to_string(i)] = i;
	double s = 0;
	std::thread t([&] { s = geo::sweep(pts, 20); });
	t.join();
	try {
		check(0);
	} catch (const std::exception &e) {
		std::printf("caught %s\n", e.what());
	}
	std::printf("%g %zu\n", s, names.size());
	return 0;
}
