/* Shared by the tool and its preload library (vg-preload.c): the client
 * request that registers the event function, and the event kinds it
 * passes (those of the collector protocol). Freestanding. */
#ifndef LP_VG_PRELOAD_H
#define LP_VG_PRELOAD_H

/* VG_USERREQ_TOOL_BASE('L','P'): arg1 = address of locprof_vg_event */
#define LPVG_REQ_REGISTER (((unsigned)'L' & 0xff) << 24 | ((unsigned)'P' & 0xff) << 16)
#define LPVG_EV_ALLOC 2 /* LP_EV_ALLOC */
#define LPVG_EV_FREE 3  /* LP_EV_FREE */

#endif
