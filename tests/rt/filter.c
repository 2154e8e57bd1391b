/* Reads stdin, writes a transformed copy to stdout (bytes rotated by one,
 * a line count at the end), exits with status 3: locprof record must not
 * change any of that. */
#include <stdio.h>

int main(void)
{
	static char buf[4096];
	size_t n, lines = 0;

	while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0) {
		for (size_t i = 0; i < n; i++) {
			lines += buf[i] == '\n';
			buf[i] = (char)(buf[i] + 1);
		}
		fwrite(buf, 1, n, stdout);
	}
	printf("\n%zu lines\n", lines);
	return 3;
}
