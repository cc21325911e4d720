/* vmath.h — SiLU, the logistic sigmoid and GELU-tanh over rows of f32, eight lanes at a time where the CPU
   has AVX2 and FMA (vmath.c). The decode step of a batch applies SiLU to every sequence's conv
   and MLP rows, and libm's expf, one element at a time, made that serial work a tenth of a
   4-sequence step on 2 threads while the other thread waited.

   A row's result never depends on where it starts or how long it is: the last n mod 8 elements
   go through the same vector code (padded), so an element gets the same bits whether its
   sequence decodes alone or in a batch, and however threads split the elements. */
#ifndef SEER_CORE_CPU_VMATH_H
#define SEER_CORE_CPU_VMATH_H

#include <stdint.h>

/* y[j] = x[j] / (1 + e^(−x[j])) for j < n; y may equal x. */
void vm_silu(float *y, const float *x, int64_t n);
/* y[j] = 1 / (1 + e^(−x[j])) for j < n; y may equal x. */
void vm_sigmoid(float *y, const float *x, int64_t n);
/* y[j] = GELU-tanh(x[j]) = 0.5x(1 + tanh u), u = sqrt(2/pi)(x + 0.044715x³), computed as x / (1 + e^(−2u))
   (the vision tower's MLP, spec §4.5); y may equal x. */
void vm_gelu_tanh(float *y, const float *x, int64_t n);

#endif
