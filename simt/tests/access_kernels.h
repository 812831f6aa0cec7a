#pragma once
void run_copy_coalesced(const float* in, float* out, int n);
void run_copy_swapped(const float* in, float* out, int width, int height);
void run_transpose(const float* in, float* out, int width, int height, bool padded);
void run_atomics(const float* in, float* out, float* bins, int n);
