/* For tests/cli/test-names-lineshare.sh: two global variables in one
 * 64-byte line, flag_word at its start and counters right after (laid out
 * in assembly, so that no compiler or linker reorders them). Each round
 * reads flag_word, sweeps a 32 KiB array (evicting the line from any
 * cache of 16K), then writes a counter, which misses, and reads flag_word
 * again at once, which hits. So every miss on the line is counters'
 * (main's write), none flag_word's; a sample of the flag read is ended by
 * that write. */
#include <stdio.h>
#include <stdlib.h>

__asm__(".data\n"
	".balign 64\n"
	".globl flag_word\n"
	".type flag_word, @object\n"
	".size flag_word, 8\n"
	"flag_word: .quad 1\n"
	".globl counters\n"
	".type counters, @object\n"
	".size counters, 32\n"
	"counters: .quad 0, 0, 0, 0\n"
	".text\n");
extern volatile long flag_word;
extern volatile long counters[4];

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 4000, sum = 0;
	volatile char *sweep = calloc(512, 64);

	if (!sweep)
		return 1;
	for (long r = 0; r < rounds; r++) {
		sum += flag_word;
		for (int k = 0; k < 512; k++)
			sum += sweep[k * 64];
		counters[r & 3]++;
		sum += flag_word;
	}
	printf("%ld %ld\n", sum, counters[0]);
	return 0;
}
