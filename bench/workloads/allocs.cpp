// An allocation-heavy C++ program for the cost of recording allocations
// (docs/runtime.md, "Allocation call stacks"): a std::map and a std::list
// grown and shrunk, and short strings made and dropped, so that most of
// its time is spent in operator new and free. Usage: allocs [ROUNDS]
#include <cstdio>
#include <cstdlib>
#include <list>
#include <map>
#include <string>

namespace work {

__attribute__((noinline)) long churn(int rounds)
{
	std::map<int, std::string> m;
	std::list<long> l;
	long sum = 0;

	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < 1000; i++) {
			m[(i * 7919 + r) % 4096] = std::string(24 + i % 8, 'x');
			l.push_back(i);
		}
		for (int i = 0; i < 1000; i++) {
			m.erase((i * 104729 + r) % 4096);
			sum += l.front();
			l.pop_front();
		}
	}
	return sum + (long)m.size();
}

} // namespace work

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 300;

	std::printf("%ld\n", work::churn(rounds));
	return 0;
}
