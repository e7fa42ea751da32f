/* Rung 05's variants live in two files; this is what they share. */
#ifndef FA2_H
#define FA2_H
#include "../common/attn.h"

extern "C" const rung rung_05a;   /* fa2_wmma.cu: the flipped loop on WMMA, O in shared memory */

#endif
