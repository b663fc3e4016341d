/*
 * Deflate for PNG rows of aerial photographs, built for time over size. After the Paeth filter a
 * photograph is mostly small residuals with little for an LZ77 match finder to find, yet that
 * search is most of zlib's and libdeflate's time. This encoder looks for one kind of match only,
 * a run of one byte (distance 1, as zlib's Z_RLE strategy), which is what flat roofs, roads and
 * transparent margins become, and writes everything as one dynamic-Huffman block whose codes fit
 * the whole tile's statistics. The idea is fpnge's (github.com/veluca93/fpnge); this is a plain C
 * take on it, with SIMD (SSE2) only where it looks for runs, not in writing the codes as fpnge's
 * AVX2 does. Measured on 256 x 256 aerial tiles in bench/tiles/encoders.ts.
 */
#include "run_deflate.h"

#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define LITLEN_SYMBOLS 286
#define END_OF_BLOCK 256
#define MAX_CODE_BITS 15
/* Literal/length codes are kept to 14 bits, so that four literals fit one write (see put). */
#define MAX_LITLEN_BITS 14
#define LENGTH_SYMBOLS_FROM 257
#define CODE_LENGTH_SYMBOLS 19
#define MAX_CODE_LENGTH_BITS 7
#define MIN_RUN 4 /* shorter runs cost more bits as a match than as literals */
#define MAX_RUN 258

static const uint16_t LENGTH_BASE[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                         31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t LENGTH_EXTRA[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                         2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
/* The order RFC 1951 stores the code-length code's lengths in. */
static const uint8_t CODE_LENGTH_ORDER[CODE_LENGTH_SYMBOLS] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                                               11, 4,  12, 3, 13, 2, 14, 1, 15};

/* Index of the length symbol (0 for 257) whose range holds `length` (3..258): eight one-length
 * codes, then four codes for each number of extra bits, and 258 alone at the end. */
static inline int length_index(unsigned length) {
  unsigned v = length - 3;
  if (length == MAX_RUN) return 28;
  if (v < 8) return (int)v;
  int extra = 31 - __builtin_clz(v) - 2;
  return 4 * extra + (int)(v >> extra);
}

/* ---- Huffman codes ---- */

typedef struct {
  uint32_t weight;
  uint16_t symbol;
} leaf;

static int by_weight(const void *a, const void *b) {
  const leaf *x = a, *y = b;
  return x->weight != y->weight ? (x->weight < y->weight ? -1 : 1) : (int)x->symbol - (int)y->symbol;
}

/* Huffman code lengths of the used symbols; returns the longest. `count` >= 2 leaves, sorted. */
static int tree_lengths(const leaf *leaves, int count, uint8_t *lengths) {
  /* Nodes 0..count-1 are the leaves, the rest internal nodes in the order they are made, which
   * is by nondecreasing weight: two sorted queues replace a heap. */
  uint32_t weight[2 * LITLEN_SYMBOLS];
  uint16_t parent[2 * LITLEN_SYMBOLS];
  uint8_t depth[2 * LITLEN_SYMBOLS];
  for (int i = 0; i < count; i++) weight[i] = leaves[i].weight;
  int next_leaf = 0, next_node = count, made = count;
  for (; made < 2 * count - 1; made++) {
    int pick[2];
    for (int k = 0; k < 2; k++) {
      int take_leaf = next_leaf < count && (next_node == made || weight[next_leaf] <= weight[next_node]);
      pick[k] = take_leaf ? next_leaf++ : next_node++;
    }
    weight[made] = weight[pick[0]] + weight[pick[1]];
    parent[pick[0]] = parent[pick[1]] = (uint16_t)made;
  }
  int root = made - 1, longest = 0;
  depth[root] = 0;
  for (int node = root - 1; node >= 0; node--) {
    depth[node] = (uint8_t)(depth[parent[node]] + 1);
    if (node < count) {
      lengths[leaves[node].symbol] = depth[node];
      if (depth[node] > longest) longest = depth[node];
    }
  }
  return longest;
}

/* Code lengths of at most `max_bits` for `symbols` frequencies (0 = unused). At least two
 * symbols get a code: an inflater may refuse a code of one. */
static void code_lengths(const uint32_t *frequency, int symbols, int max_bits, uint8_t *lengths) {
  leaf leaves[LITLEN_SYMBOLS];
  int count = 0;
  memset(lengths, 0, (size_t)symbols);
  for (int s = 0; s < symbols; s++)
    if (frequency[s]) leaves[count++] = (leaf){frequency[s], (uint16_t)s};
  for (int s = 0; count < 2; s++)
    if (!frequency[s]) leaves[count++] = (leaf){1, (uint16_t)s};
  qsort(leaves, (size_t)count, sizeof *leaves, by_weight);
  /* Too deep: flatten the weights and build again; halving keeps the order of the leaves. */
  while (tree_lengths(leaves, count, lengths) > max_bits)
    for (int i = 0; i < count; i++) leaves[i].weight = (leaves[i].weight >> 1) | 1;
}

static uint16_t reversed(uint16_t code, int bits) {
  uint16_t out = 0;
  for (int i = 0; i < bits; i++, code >>= 1) out = (uint16_t)((out << 1) | (code & 1));
  return out;
}

/* RFC 1951 3.2.2's canonical codes, bit-reversed because deflate writes codes from the top bit
 * into a stream read from the bottom bit. */
static void canonical_codes(const uint8_t *lengths, int symbols, uint16_t *codes) {
  uint16_t per_length[MAX_CODE_BITS + 1] = {0}, next[MAX_CODE_BITS + 1];
  for (int s = 0; s < symbols; s++) per_length[lengths[s]]++;
  per_length[0] = 0;
  uint16_t code = 0;
  for (int bits = 1; bits <= MAX_CODE_BITS; bits++) next[bits] = code = (uint16_t)((code + per_length[bits - 1]) << 1);
  for (int s = 0; s < symbols; s++) codes[s] = lengths[s] ? reversed(next[lengths[s]]++, lengths[s]) : 0;
}

/* ---- Bits out ---- */

typedef struct {
  uint8_t *out;
  uint64_t bits;
  int count; /* < 8 between puts */
} bit_writer;

/* Up to 64 - 7 bits at once; writes 8 bytes each time, so `out` needs 8 bytes of slack. */
static inline void put(bit_writer *w, uint64_t value, int bits) {
  w->bits |= value << w->count;
  w->count += bits;
  memcpy(w->out, &w->bits, 8); /* little-endian, as deflate's bit order needs */
  w->out += w->count >> 3;
  w->bits >>= w->count & ~7;
  w->count &= 7;
}

/* ---- The stream ---- */

size_t run_deflate_bound(size_t length) {
  /* Literals of up to 14 bits (a run of 4 or more takes at most 20), the block header (at most 288
   * code lengths of 14 bits and 19 of 3, about 520 bytes) and put()'s 8 bytes of slack. */
  return length * 2 + 1024;
}

typedef struct {
  uint32_t at;     /* first byte of the run */
  uint32_t length; /* MIN_RUN..MAX_RUN copies of in[at - 1] */
} run;

static inline uint64_t load64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

static size_t run_end(const uint8_t *in, size_t length, size_t at) {
  size_t end = at + MIN_RUN;
  while (end < length && end - at < MAX_RUN && in[end] == in[at - 1]) end++;
  return end;
}

/* Bit k set where a run of MIN_RUN could start at in[k], k = 0..window - MIN_RUN: in[k..k+3] all
 * equal in[k-1]. `window` bytes are compared with their left neighbours at once. */
#ifdef __SSE2__
enum { WINDOW = 16 };
static inline uint32_t run_starts(const uint8_t *in) {
  __m128i here = _mm_loadu_si128((const __m128i *)in), before = _mm_loadu_si128((const __m128i *)(in - 1));
  uint32_t same = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(here, before));
  return same & (same >> 1) & (same >> 2) & (same >> 3) & ((1u << (WINDOW - MIN_RUN + 1)) - 1);
}
#else
enum { WINDOW = 8 };
static inline uint32_t run_starts(const uint8_t *in) {
  const uint64_t low7 = 0x7f7f7f7f7f7f7f7fULL;
  uint64_t differ = load64(in) ^ load64(in - 1);
  uint64_t same = ~(((differ & low7) + low7) | differ | low7); /* 0x80 in each byte that is equal */
  uint64_t four = same & (same >> 8) & (same >> 16) & (same >> 24);
  uint32_t starts = 0;
  for (int k = 0; k <= WINDOW - MIN_RUN; k++) starts |= (uint32_t)((four >> (8 * k + 7)) & 1) << k;
  return starts;
}
#endif

/* The runs of `in`, left to right. In a photograph most bytes differ from their left neighbour, so
 * a window of comparisons at once mostly rules out every start in it. */
static size_t find_runs(const uint8_t *in, size_t length, run *runs) {
  size_t count = 0, i = 1;
  while (i + WINDOW <= length) {
    uint32_t starts = run_starts(in + i);
    if (!starts) {
      i += WINDOW - MIN_RUN + 1;
      continue;
    }
    size_t at = i + (size_t)__builtin_ctz(starts);
    size_t end = run_end(in, length, at);
    runs[count++] = (run){(uint32_t)at, (uint32_t)(end - at)};
    i = end;
  }
  for (; i + MIN_RUN <= length; i++) {
    if (memcmp(in + i, in + i - 1, MIN_RUN) != 0) continue;
    size_t end = run_end(in, length, i);
    runs[count++] = (run){(uint32_t)i, (uint32_t)(end - i)};
    i = end - 1;
  }
  return count;
}

/* How often each literal/length symbol is written: every byte, less the ones runs stand for. */
static void count_symbols(const uint8_t *in, size_t length, const run *runs, size_t run_count, uint32_t *frequency) {
  /* Four tables, so that neighbouring equal bytes do not wait on each other's increment. */
  uint32_t tables[4][256] = {{0}};
  size_t i = 0;
  for (; i + 8 <= length; i += 8) {
    uint64_t eight = load64(in + i);
    for (int k = 0; k < 8; k++) tables[k & 3][(eight >> (8 * k)) & 0xff]++;
  }
  for (; i < length; i++) tables[0][in[i]]++;
  for (int b = 0; b < 256; b++) frequency[b] = tables[0][b] + tables[1][b] + tables[2][b] + tables[3][b];
  for (size_t r = 0; r < run_count; r++) {
    frequency[in[runs[r].at - 1]] -= runs[r].length;
    frequency[LENGTH_SYMBOLS_FROM + length_index(runs[r].length)]++;
  }
}

/* The code lengths of both alphabets, run-length coded with the code-length code (symbols 17 and
 * 18 for runs of zeros), then that code's own lengths, as RFC 1951 3.2.7 lays them out. */
static void write_code_lengths(bit_writer *w, const uint8_t *all, int litlen_count, int distance_count) {
  int total = litlen_count + distance_count;
  uint8_t symbol[LITLEN_SYMBOLS + 2], extra[LITLEN_SYMBOLS + 2];
  int items = 0;
  uint32_t frequency[CODE_LENGTH_SYMBOLS] = {0};
  for (int i = 0; i < total;) {
    int zeros = 0;
    while (i + zeros < total && all[i + zeros] == 0 && zeros < 138) zeros++;
    if (zeros >= 11) symbol[items] = 18, extra[items++] = (uint8_t)(zeros - 11), i += zeros;
    else if (zeros >= 3) symbol[items] = 17, extra[items++] = (uint8_t)(zeros - 3), i += zeros;
    else symbol[items] = all[i], extra[items++] = 0, i++;
    frequency[symbol[items - 1]]++;
  }
  uint8_t lengths[CODE_LENGTH_SYMBOLS];
  uint16_t codes[CODE_LENGTH_SYMBOLS];
  code_lengths(frequency, CODE_LENGTH_SYMBOLS, MAX_CODE_LENGTH_BITS, lengths);
  canonical_codes(lengths, CODE_LENGTH_SYMBOLS, codes);
  int stored = CODE_LENGTH_SYMBOLS;
  while (stored > 4 && lengths[CODE_LENGTH_ORDER[stored - 1]] == 0) stored--;

  put(w, (uint64_t)(litlen_count - 257), 5);
  put(w, (uint64_t)(distance_count - 1), 5);
  put(w, (uint64_t)(stored - 4), 4);
  for (int i = 0; i < stored; i++) put(w, lengths[CODE_LENGTH_ORDER[i]], 3);
  for (int i = 0; i < items; i++) {
    put(w, codes[symbol[i]], lengths[symbol[i]]);
    if (symbol[i] == 17) put(w, extra[i], 3);
    else if (symbol[i] == 18) put(w, extra[i], 7);
  }
}

/* Literals in[from..to), four codes (at most 56 bits) per write; the writer lives in registers. */
static void put_literals(bit_writer *writer, const uint8_t *in, size_t from, size_t to, const uint32_t *coded) {
  bit_writer w = *writer;
  size_t i = from;
  for (; i + 4 <= to; i += 4) {
    uint32_t a = coded[in[i]], b = coded[in[i + 1]], c = coded[in[i + 2]], d = coded[in[i + 3]];
    int la = (int)(a >> 16), lb = (int)(b >> 16), lc = (int)(c >> 16), ld = (int)(d >> 16);
    uint64_t bits = (a & 0xffff) | (uint64_t)(b & 0xffff) << la | (uint64_t)(c & 0xffff) << (la + lb) |
                    (uint64_t)(d & 0xffff) << (la + lb + lc);
    put(&w, bits, la + lb + lc + ld);
  }
  for (; i < to; i++) put(&w, coded[in[i]] & 0xffff, (int)(coded[in[i]] >> 16));
  *writer = w;
}

size_t run_deflate(const uint8_t *in, size_t length, uint8_t *out) {
  run *runs = malloc((length / MIN_RUN + 1) * sizeof *runs);
  if (!runs) return 0;
  size_t run_count = find_runs(in, length, runs);
  uint32_t frequency[LITLEN_SYMBOLS] = {0};
  count_symbols(in, length, runs, run_count, frequency);
  frequency[END_OF_BLOCK] = 1;

  /* Literal/length lengths, then the two distance codes (distance 1 is the only one used; two
   * one-bit codes make a complete code, which every inflater accepts). */
  uint8_t lengths[LITLEN_SYMBOLS + 2];
  uint16_t codes[LITLEN_SYMBOLS];
  code_lengths(frequency, LITLEN_SYMBOLS, MAX_LITLEN_BITS, lengths);
  canonical_codes(lengths, LITLEN_SYMBOLS, codes);
  int litlen_count = LITLEN_SYMBOLS;
  while (lengths[litlen_count - 1] == 0) litlen_count--;
  lengths[litlen_count] = lengths[litlen_count + 1] = 1;
  uint32_t coded[256]; /* a literal's code, and its length above bit 16 */
  for (int b = 0; b < 256; b++) coded[b] = codes[b] | (uint32_t)lengths[b] << 16;

  bit_writer w = {out, 0, 0};
  put(&w, 1, 1); /* BFINAL: the only block */
  put(&w, 2, 2); /* BTYPE: dynamic Huffman */
  write_code_lengths(&w, lengths, litlen_count, 2);
  size_t at = 0;
  for (size_t r = 0; r < run_count; r++) {
    put_literals(&w, in, at, runs[r].at, coded);
    int index = length_index(runs[r].length), symbol = LENGTH_SYMBOLS_FROM + index;
    /* Length code, its extra bits, then distance code 0 (distance 1) in one bit. */
    put(&w, codes[symbol], lengths[symbol]);
    put(&w, runs[r].length - LENGTH_BASE[index], LENGTH_EXTRA[index]);
    put(&w, 0, 1);
    at = runs[r].at + runs[r].length;
  }
  put_literals(&w, in, at, length, coded);
  put(&w, codes[END_OF_BLOCK], lengths[END_OF_BLOCK]);
  free(runs);
  return (size_t)(w.out - out) + (w.count > 0);
}
