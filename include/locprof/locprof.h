/* locprof/locprof.h - the umbrella header of liblocprof: every public
 * header, so that a front end needs one include. The library itself
 * includes the headers it uses one by one (docs/architecture.md). */
#ifndef LOCPROF_LOCPROF_H
#define LOCPROF_LOCPROF_H

#include <locprof/common.h>
#include <locprof/mapping.h>
#include <locprof/trace.h>
#include <locprof/synth.h>
#include <locprof/exact.h>
#include <locprof/sim.h>
#include <locprof/sample.h>
#include <locprof/profile.h>
#include <locprof/symbol.h>
#include <locprof/recorder.h>
#include <locprof/model.h>
#include <locprof/prediction.h>
#include <locprof/report.h>
#include <locprof/pmu.h>
/* for programs being profiled: header-only markers, no library code */
#include <locprof/roi.h>

#endif
