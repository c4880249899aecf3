/* SPDX-License-Identifier: MIT */
/*
 * The custom mutator of the fuzz targets that read .pptrace files
 * (fuzz_reader.c, fuzz_analyze.c). Every chunk carries CRC-32C checksums,
 * so random mutations nearly always end in "bad chunk" and never reach
 * the payload decoders: after half of libFuzzer's mutations the checksums
 * of every chunk are sealed again, letting the fuzzer explore malformed
 * payloads too. Include it in one target's source.
 */
#ifndef PP_FUZZ_PPTRACE_MUTATOR_H
#define PP_FUZZ_PPTRACE_MUTATOR_H

#include <stddef.h>
#include <stdint.h>

#include "format/pptrace.h"
#include "internal.h"

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
                               unsigned int seed);
/* Provided by libFuzzer; absent (NULL) in the corpus replay driver, which
 * never calls the custom mutator. */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size)
    __attribute__((weak));

/* Recompute the payload and header checksums of every chunk whose header
 * magic is in place and whose payload fits in the buffer. */
static void pp_fuzz_reseal(uint8_t *d, size_t size) {
  size_t pos = PPT_FILE_HEADER_SIZE;
  while (pos + PPT_CHUNK_HEADER_SIZE <= size) {
    if (ppt_get_u32(d + pos) != PPT_CHUNK_MAGIC) {
      pos++;
      continue;
    }
    uint32_t plen = ppt_get_u32(d + pos + 8);
    if (plen > size - pos - PPT_CHUNK_HEADER_SIZE)
      break;
    ppt_put_u32(d + pos + 12,
                pp__crc32c(0, d + pos + PPT_CHUNK_HEADER_SIZE, plen));
    ppt_put_u32(d + pos + 20, pp__crc32c(0, d + pos, 20));
    pos += PPT_CHUNK_HEADER_SIZE + plen;
  }
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
                               unsigned int seed) {
  if (!LLVMFuzzerMutate)
    return size;
  size = LLVMFuzzerMutate(data, size, max_size);
  if (seed & 1)
    pp_fuzz_reseal(data, size);
  return size;
}

#endif /* PP_FUZZ_PPTRACE_MUTATOR_H */
