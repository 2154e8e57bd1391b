// Allocation call stacks (tests/cli/test-record-pmu-allocs.sh,
// test-trace-stacks.sh): points in a vector (std::allocator, operator
// new), swept; a forked child builds and sweeps a table of its own. Small:
// the pmu backend's step counter runs it one instruction at a time.
#include <cstdio>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>
namespace geo {
struct point { double x, y; };
__attribute__((noinline)) std::vector<point> make_points(size_t n)
{
	std::vector<point> v;
	for (size_t i = 0; i < n; i++)
		v.push_back({ double((i * 7) % n), double(i) });
	return v;
}
__attribute__((noinline)) std::vector<long> child_table(size_t n)
{
	std::vector<long> v(n);
	for (size_t i = 0; i < n; i++)
		v[i] = long(i * 3);
	return v;
}
template <class T> __attribute__((noinline)) double sweep(const std::vector<T> &v, int rounds)
{
	double s = 0;
	for (int r = 0; r < rounds; r++)
		for (size_t i = 0; i < v.size(); i += 4)
			s += double(v[(i * 13) % v.size()].x);
	return s;
}
__attribute__((noinline)) long sum(const std::vector<long> &v, int rounds)
{
	long s = 0;
	for (int r = 0; r < rounds; r++)
		for (size_t i = 0; i < v.size(); i += 4)
			s += v[(i * 13) % v.size()];
	return s;
}
} // namespace geo
int main()
{
	std::vector<geo::point> pts = geo::make_points(1024);
	pid_t pid = fork();
	if (pid == 0) {
		std::vector<long> t = geo::child_table(1024);
		std::printf("child %ld\n", geo::sum(t, 4));
		return 0;
	}
	int st;
	waitpid(pid, &st, 0);
	std::printf("parent %.0f\n", geo::sweep(pts, 4));
	return 0;
}
