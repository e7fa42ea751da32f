#ifndef WGMMA_ASM_H
#define WGMMA_ASM_H

/* The operand lists of wgmma's inline PTX, for the wrappers of common/hopper.cuh: plumbing, not
 * lesson. Inline PTX numbers its operands in order, outputs first, and N / 2 accumulators make the
 * position of any operand listed after them depend on N; so the
 * descriptors, A and the flag are listed first (as in-out operands, which they are not: the
 * instruction only reads them) and the accumulators after, at fixed positions: from %3 for the
 * shared-memory form, from %6 for the register form. WG_SS_g / WG_RS_g name the eight
 * accumulators of group g in the PTX text, WG_F8 binds them, WG_CATk / WG_OPSk take the first
 * k groups. */
#define WG_F8(i) "+f"(d[(i) + 0]), "+f"(d[(i) + 1]), "+f"(d[(i) + 2]), "+f"(d[(i) + 3]), \
                 "+f"(d[(i) + 4]), "+f"(d[(i) + 5]), "+f"(d[(i) + 6]), "+f"(d[(i) + 7])
#define WG_SS_0 "%3, %4, %5, %6, %7, %8, %9, %10"
#define WG_SS_1 ", %11, %12, %13, %14, %15, %16, %17, %18"
#define WG_SS_2 ", %19, %20, %21, %22, %23, %24, %25, %26"
#define WG_SS_3 ", %27, %28, %29, %30, %31, %32, %33, %34"
#define WG_SS_4 ", %35, %36, %37, %38, %39, %40, %41, %42"
#define WG_SS_5 ", %43, %44, %45, %46, %47, %48, %49, %50"
#define WG_SS_6 ", %51, %52, %53, %54, %55, %56, %57, %58"
#define WG_SS_7 ", %59, %60, %61, %62, %63, %64, %65, %66"
#define WG_SS_8 ", %67, %68, %69, %70, %71, %72, %73, %74"
#define WG_SS_9 ", %75, %76, %77, %78, %79, %80, %81, %82"
#define WG_SS_10 ", %83, %84, %85, %86, %87, %88, %89, %90"
#define WG_SS_11 ", %91, %92, %93, %94, %95, %96, %97, %98"
#define WG_SS_12 ", %99, %100, %101, %102, %103, %104, %105, %106"
#define WG_SS_13 ", %107, %108, %109, %110, %111, %112, %113, %114"
#define WG_SS_14 ", %115, %116, %117, %118, %119, %120, %121, %122"
#define WG_SS_15 ", %123, %124, %125, %126, %127, %128, %129, %130"
#define WG_RS_0 "%6, %7, %8, %9, %10, %11, %12, %13"
#define WG_RS_1 ", %14, %15, %16, %17, %18, %19, %20, %21"
#define WG_RS_2 ", %22, %23, %24, %25, %26, %27, %28, %29"
#define WG_RS_3 ", %30, %31, %32, %33, %34, %35, %36, %37"
#define WG_RS_4 ", %38, %39, %40, %41, %42, %43, %44, %45"
#define WG_RS_5 ", %46, %47, %48, %49, %50, %51, %52, %53"
#define WG_RS_6 ", %54, %55, %56, %57, %58, %59, %60, %61"
#define WG_RS_7 ", %62, %63, %64, %65, %66, %67, %68, %69"
#define WG_RS_8 ", %70, %71, %72, %73, %74, %75, %76, %77"
#define WG_RS_9 ", %78, %79, %80, %81, %82, %83, %84, %85"
#define WG_RS_10 ", %86, %87, %88, %89, %90, %91, %92, %93"
#define WG_RS_11 ", %94, %95, %96, %97, %98, %99, %100, %101"
#define WG_RS_12 ", %102, %103, %104, %105, %106, %107, %108, %109"
#define WG_RS_13 ", %110, %111, %112, %113, %114, %115, %116, %117"
#define WG_RS_14 ", %118, %119, %120, %121, %122, %123, %124, %125"
#define WG_RS_15 ", %126, %127, %128, %129, %130, %131, %132, %133"
#define WG_CAT1(P) P##0
#define WG_CAT2(P) WG_CAT1(P) P##1
#define WG_CAT3(P) WG_CAT2(P) P##2
#define WG_CAT4(P) WG_CAT3(P) P##3
#define WG_CAT5(P) WG_CAT4(P) P##4
#define WG_CAT6(P) WG_CAT5(P) P##5
#define WG_CAT7(P) WG_CAT6(P) P##6
#define WG_CAT8(P) WG_CAT7(P) P##7
#define WG_CAT9(P) WG_CAT8(P) P##8
#define WG_CAT10(P) WG_CAT9(P) P##9
#define WG_CAT11(P) WG_CAT10(P) P##10
#define WG_CAT12(P) WG_CAT11(P) P##11
#define WG_CAT13(P) WG_CAT12(P) P##12
#define WG_CAT14(P) WG_CAT13(P) P##13
#define WG_CAT15(P) WG_CAT14(P) P##14
#define WG_CAT16(P) WG_CAT15(P) P##15
#define WG_OPS1 WG_F8(0)
#define WG_OPS2 WG_OPS1, WG_F8(8)
#define WG_OPS3 WG_OPS2, WG_F8(16)
#define WG_OPS4 WG_OPS3, WG_F8(24)
#define WG_OPS5 WG_OPS4, WG_F8(32)
#define WG_OPS6 WG_OPS5, WG_F8(40)
#define WG_OPS7 WG_OPS6, WG_F8(48)
#define WG_OPS8 WG_OPS7, WG_F8(56)
#define WG_OPS9 WG_OPS8, WG_F8(64)
#define WG_OPS10 WG_OPS9, WG_F8(72)
#define WG_OPS11 WG_OPS10, WG_F8(80)
#define WG_OPS12 WG_OPS11, WG_F8(88)
#define WG_OPS13 WG_OPS12, WG_F8(96)
#define WG_OPS14 WG_OPS13, WG_F8(104)
#define WG_OPS15 WG_OPS14, WG_F8(112)
#define WG_OPS16 WG_OPS15, WG_F8(120)

/* K is the instruction's k ("k16", "k32"), IMM the immediates after the scales of A and B: the
 * 16-bit forms take transpose bits (A and B K-major: 0, 0; register A: B N-major, 1), the 8-bit
 * forms none (both operands K-major, always). */
#define WGMMA_SS_GEN(G, NS, TY, K, IMM)                                                               \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %2, 0;\nwgmma.mma_async.sync.aligned.m64n" NS      \
                 K ".f32." TY "." TY " {" WG_CAT##G(WG_SS_) "}, %0, %1, p, 1, 1" IMM ";\n}\n"            \
                 : "+l"(da), "+l"(db), "+r"(acc), WG_OPS##G)
#define WGMMA_RS_GEN(G, NS, TY, K, IMM)                                                               \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %5, 0;\nwgmma.mma_async.sync.aligned.m64n" NS      \
                 K ".f32." TY "." TY " {" WG_CAT##G(WG_RS_) "}, {%0, %1, %2, %3}, %4, p, 1, 1" IMM ";\n}\n" \
                 : "+r"(a0), "+r"(a1), "+r"(a2), "+r"(a3), "+l"(db), "+r"(acc), WG_OPS##G)
#define WGMMA_SS_ASM(G, NS, TY) WGMMA_SS_GEN(G, NS, TY, "k16", ", 0, 0")
#define WGMMA_RS_ASM(G, NS, TY) WGMMA_RS_GEN(G, NS, TY, "k16", ", 1")
#define WGMMA_SS_TT_ASM(G, NS, TY) WGMMA_SS_GEN(G, NS, TY, "k16", ", 1, 1")
/* One case per N = 16 G: the G-th line below picks the instruction for N. */
#define WGMMA_BY_N(ASM, TY)                                                                           \
    if constexpr (G == 1) ASM(1, "16", TY);  else if constexpr (G == 2) ASM(2, "32", TY);              \
    else if constexpr (G == 3) ASM(3, "48", TY);   else if constexpr (G == 4) ASM(4, "64", TY);         \
    else if constexpr (G == 5) ASM(5, "80", TY);   else if constexpr (G == 6) ASM(6, "96", TY);         \
    else if constexpr (G == 7) ASM(7, "112", TY);  else if constexpr (G == 8) ASM(8, "128", TY);        \
    else if constexpr (G == 9) ASM(9, "144", TY);  else if constexpr (G == 10) ASM(10, "160", TY);      \
    else if constexpr (G == 11) ASM(11, "176", TY); else if constexpr (G == 12) ASM(12, "192", TY);     \
    else if constexpr (G == 13) ASM(13, "208", TY); else if constexpr (G == 14) ASM(14, "224", TY);     \
    else if constexpr (G == 15) ASM(15, "240", TY); else ASM(16, "256", TY);

#endif
