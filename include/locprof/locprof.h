/* locprof/locprof.h - the umbrella header of liblocprof. */
#ifndef LOCPROF_LOCPROF_H
#define LOCPROF_LOCPROF_H

#include <locprof/common.h>
#include <locprof/exact.h>
#include <locprof/mapping.h>
#include <locprof/synth.h>
#include <locprof/trace.h>

#endif
