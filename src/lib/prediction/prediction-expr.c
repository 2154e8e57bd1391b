/* Expressions of the problem size P, for basis functions and units of work.
 *
 * A recursive-descent parser compiles the text to a postfix program that a
 * small stack machine evaluates; expressions are tiny ("P*log(P)") and are
 * evaluated a few thousand times per fit, so nothing cleverer is needed. */
#include <locprof/prediction.h>

#include "common/error.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum op {
	OP_NUM, OP_P, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_POW, OP_NEG,
	OP_LOG, OP_LOG2, OP_LOG10, OP_SQRT, OP_EXP, OP_ABS,
};

struct insn {
	enum op op;
	double v;
};

#define EXPR_MAX 64
#define EXPR_DEPTH 32

struct lp_pred_expr {
	struct insn code[EXPR_MAX];
	size_t n;
	char *text;
};

struct parser {
	const char *s;
	struct lp_pred_expr *e;
	int depth;
	int err;
	const char *what;
};

static void skip(struct parser *p)
{
	while (isspace((unsigned char)*p->s))
		p->s++;
}

static void emit(struct parser *p, enum op op, double v)
{
	if (p->err)
		return;
	if (p->e->n >= EXPR_MAX) {
		p->err = 1;
		p->what = "expression too long";
		return;
	}
	p->e->code[p->e->n].op = op;
	p->e->code[p->e->n].v = v;
	p->e->n++;
}

static void fail(struct parser *p, const char *what)
{
	if (!p->err) {
		p->err = 1;
		p->what = what;
	}
}

static void expr(struct parser *p);

/* "( expr )", at the '(' */
static void paren_expr(struct parser *p)
{
	p->s++;
	expr(p);
	skip(p);
	if (*p->s != ')')
		return fail(p, "missing ')'");
	p->s++;
}

static void primary(struct parser *p)
{
	static const struct { const char *name; enum op op; } funcs[] = {
		{ "log2", OP_LOG2 }, { "log10", OP_LOG10 }, { "log", OP_LOG }, { "ln", OP_LOG },
		{ "sqrt", OP_SQRT }, { "exp", OP_EXP }, { "abs", OP_ABS },
	};

	skip(p);
	if (p->err)
		return;
	if (isdigit((unsigned char)*p->s) || *p->s == '.') {
		char *end;
		double v = strtod(p->s, &end);
		if (end == p->s)
			return fail(p, "bad number");
		p->s = end;
		emit(p, OP_NUM, v);
		return;
	}
	if (*p->s == '(')
		return paren_expr(p);
	for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		size_t len = strlen(funcs[i].name);
		if (!strncmp(p->s, funcs[i].name, len) && !isalnum((unsigned char)p->s[len])) {
			p->s += len;
			skip(p);
			if (*p->s != '(')
				return fail(p, "a function needs '(' after its name");
			paren_expr(p);
			emit(p, funcs[i].op, 0);
			return;
		}
	}
	if ((*p->s == 'P' || *p->s == 'p') && !isalnum((unsigned char)p->s[1])) {
		p->s++;
		emit(p, OP_P, 0);
		return;
	}
	fail(p, *p->s ? "unknown name (use P, numbers, log, log2, log10, sqrt, exp, abs)"
		      : "expression ends early");
}

static void unary(struct parser *p);

static void power(struct parser *p)
{
	primary(p);
	skip(p);
	if (*p->s == '^') {
		p->s++;
		unary(p); /* right-associative: P^2^3 = P^(2^3) */
		emit(p, OP_POW, 0);
	}
}

static void unary(struct parser *p)
{
	skip(p);
	if (*p->s == '-') {
		p->s++;
		if (++p->depth > EXPR_DEPTH)
			return fail(p, "expression nested too deeply");
		unary(p);
		p->depth--;
		emit(p, OP_NEG, 0);
		return;
	}
	if (*p->s == '+') {
		p->s++;
		unary(p);
		return;
	}
	power(p);
}

/* One level of left-associative binary operators: operand (op operand)*,
 * op being op1 (emitted as code1) or op2 (code2). */
static void binary_level(struct parser *p, void (*operand)(struct parser *), char op1, enum op code1,
			 char op2, enum op code2)
{
	operand(p);
	for (;;) {
		skip(p);
		if (p->err || (*p->s != op1 && *p->s != op2))
			return;
		char c = *p->s++;
		operand(p);
		emit(p, c == op1 ? code1 : code2, 0);
	}
}

static void term(struct parser *p)
{
	binary_level(p, unary, '*', OP_MUL, '/', OP_DIV);
}

static void expr(struct parser *p)
{
	if (++p->depth > EXPR_DEPTH)
		return fail(p, "expression nested too deeply");
	binary_level(p, term, '+', OP_ADD, '-', OP_SUB);
	p->depth--;
}

int lp_pred_expr_parse(struct lp_pred_expr **out, const char *text)
{
	struct lp_pred_expr *e;
	struct parser p = { 0 };
	size_t k = 0;

	*out = NULL;
	if (!text)
		return lp_seterr(LP_EINVAL, "no expression");
	if (!(e = calloc(1, sizeof(*e))) || !(e->text = malloc(strlen(text) + 1))) {
		free(e);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	for (const char *s = text; *s; s++)
		if (!isspace((unsigned char)*s))
			e->text[k++] = *s;
	e->text[k] = 0;
	p.s = text;
	p.e = e;
	expr(&p);
	skip(&p);
	if (!p.err && *p.s)
		fail(&p, *p.s == ')' ? "unbalanced ')'" : "unexpected character");
	if (p.err) {
		int err = lp_seterr(LP_EPARSE, "bad expression '%s': %s at '%.10s'", text, p.what, p.s);
		lp_pred_expr_free(e);
		return err;
	}
	*out = e;
	return 0;
}

double lp_pred_expr_eval(const struct lp_pred_expr *e, double P)
{
	double st[EXPR_MAX];
	size_t sp = 0;

	for (size_t i = 0; i < e->n; i++) {
		const struct insn *c = &e->code[i];
		double a, b;
		switch (c->op) {
		case OP_NUM: st[sp++] = c->v; break;
		case OP_P: st[sp++] = P; break;
		case OP_NEG: st[sp - 1] = -st[sp - 1]; break;
		case OP_LOG: st[sp - 1] = log(st[sp - 1]); break;
		case OP_LOG2: st[sp - 1] = log2(st[sp - 1]); break;
		case OP_LOG10: st[sp - 1] = log10(st[sp - 1]); break;
		case OP_SQRT: st[sp - 1] = sqrt(st[sp - 1]); break;
		case OP_EXP: st[sp - 1] = exp(st[sp - 1]); break;
		case OP_ABS: st[sp - 1] = fabs(st[sp - 1]); break;
		default:
			b = st[--sp];
			a = st[sp - 1];
			switch (c->op) {
			case OP_ADD: a += b; break;
			case OP_SUB: a -= b; break;
			case OP_MUL: a *= b; break;
			case OP_DIV: a /= b; break;
			default: a = pow(a, b); break;
			}
			st[sp - 1] = a;
		}
	}
	return sp ? st[0] : NAN;
}

const char *lp_pred_expr_text(const struct lp_pred_expr *e)
{
	return e->text;
}

void lp_pred_expr_free(struct lp_pred_expr *e)
{
	if (!e)
		return;
	free(e->text);
	free(e);
}
