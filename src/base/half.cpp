#include "base/half.h"

namespace vf {

float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (man << 13));  // inf or NaN
  if (exp == 0) {
    if (man == 0) return bits_float(sign);
    // Subnormal: value = man * 2^-24.
    float v = static_cast<float>(man) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  return bits_float(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t float_to_half(float f) {
  uint32_t u = float_bits(f);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u;       // NaN
  if (a >= 0x477ff000u) return sign | 0x7c00u;      // rounds to inf (>= 65520)
  if (a < 0x38800000u) {                            // below the smallest normal half (2^-14)
    if (a < 0x33000000u) return sign;               // below half of the smallest subnormal: 0
    // Subnormal half: round the float's value to a multiple of 2^-24, ties to even.
    uint32_t exp = a >> 23;
    uint32_t man = (a & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - exp;  // 14..24 for the range handled here
    uint32_t halfway = 1u << (shift - 1);
    uint32_t rest = man & ((1u << shift) - 1);
    uint32_t q = man >> shift;
    if (rest > halfway || (rest == halfway && (q & 1u))) ++q;
    return sign | static_cast<uint16_t>(q);
  }
  // Normal: rebias the exponent and round the mantissa to 10 bits, ties to even.
  uint32_t r = a + 0xfffu + ((a >> 13) & 1u);
  return sign | static_cast<uint16_t>((r - 0x38000000u) >> 13);
}

}  // namespace vf
