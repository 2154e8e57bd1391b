/* printf for values that may be unknown: a model's value is NaN where it
 * is unknown (a profile without samples has no miss ratio), and JSON has
 * no NaN or infinity. cli_jprintf() writes such a floating-point
 * conversion as null, cli_tprintf() (text tables) as "n/a" in the same
 * width. The format is printf's; each conversion is handed to printf on
 * its own with its flags, width, precision and length, so every other
 * conversion prints exactly as printf would. */
#include "cli.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* One conversion spec[0, n) (from '%' to its conversion character), its
 * argument taken from ap by the length modifier. */
static void one_conversion(const char *spec, size_t n, const char *unknown, va_list *ap)
{
	char f[64];
	char conv = spec[n - 1];
	const char *len = spec + 1;

	if (n >= sizeof(f)) { /* no locprof format comes near it */
		fputs("null", stdout);
		return;
	}
	memcpy(f, spec, n);
	f[n] = 0;
	while (*len && strchr("-+ #0123456789.", *len))
		len++;
	switch (conv) {
	case 'f': case 'F': case 'g': case 'G': case 'e': case 'E': case 'a': case 'A': {
		double v = *len == 'L' ? (double)va_arg(*ap, long double) : va_arg(*ap, double);
		if (isfinite(v))
			printf(f, v);
		else if (!strcmp(unknown, "null"))
			fputs(unknown, stdout);
		else /* the width printf gave "nan", right-aligned */
			printf("%*s", snprintf(NULL, 0, f, v), unknown);
		break;
	}
	case 's': printf(f, va_arg(*ap, const char *)); break;
	case 'p': printf(f, va_arg(*ap, void *)); break;
	case 'c': printf(f, va_arg(*ap, int)); break;
	default: /* d i u x X o: by the length modifier */
		if (!strncmp(len, "ll", 2) || *len == 'j' || *len == 'q')
			printf(f, va_arg(*ap, long long));
		else if (*len == 'l' || *len == 'z' || *len == 't')
			printf(f, va_arg(*ap, long));
		else
			printf(f, va_arg(*ap, int));
	}
}

static void vprint(const char *unknown, const char *fmt, va_list ap)
{
	va_list cp;

	va_copy(cp, ap);
	for (const char *p = fmt; *p;) {
		const char *pc = strchr(p, '%');
		size_t n;

		if (!pc) {
			fputs(p, stdout);
			break;
		}
		fwrite(p, 1, (size_t)(pc - p), stdout);
		if (pc[1] == '%') {
			putchar('%');
			p = pc + 2;
			continue;
		}
		n = 1 + strcspn(pc + 1, "diouxXeEfFgGaAcspn");
		if (!pc[n]) /* a lone '%' at the end: as printf would, nothing */
			break;
		one_conversion(pc, n + 1, unknown, &cp);
		p = pc + n + 1;
	}
	va_end(cp);
}

void cli_jprintf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint("null", fmt, ap);
	va_end(ap);
}

void cli_tprintf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint("n/a", fmt, ap);
	va_end(ap);
}
