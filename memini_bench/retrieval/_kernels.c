/* Compiled fast paths of the hybrid's hottest steps, each one call per query and the same floats as the
 * numpy/Python path it replaces (tests compare them bit for bit). Built at install by setup.py, optional: without
 * it keyword.py, vector.py and fusion.py run their own paths. Compiled with -ffp-contract=off: no fused multiply-add.
 *
 * bm25_top_k(terms, spans, postings, query_ids, members, k, out_ids, out_scores) -> n
 *   terms      int32[T]      one group's distinct term ids, ascending (the last a sentinel above every id)
 *   spans      int64[T, 2]   per term, its rows [start, end) of postings (the sentinel's is empty)
 *   postings   float64[P, 2] rows of (local doc number, IDF * weight)
 *   query_ids  int64[m]      the query's term ids in query order, repeats kept
 *   members    int64[D]      local doc number -> global item index
 *   Each document's score is 0.0 plus its postings' weights added term after term in query order (what
 *   np.bincount over the concatenated postings computes); documents scoring > 0 are ranked by score descending,
 *   ties by ascending local number (np.argsort(-scores, kind="stable")); the first k go to out_ids (global
 *   indices, int64) and out_scores (float64), each at least min(k, D) long.
 *
 * vector_top_k(squared, positions, ids, k, out_ids, out_scores) -> n
 *   squared    float32[m]    candidates' squared L2 distances (the einsum of vector.py, which stays in numpy)
 *   positions  int64[m]      their positions in the group, ascending
 *   ids        int64[G]      group position -> global item index
 *   Each candidate's score is 1.0 / (1.0 + (double)sqrtf(squared)) (numpy's float32 sqrt, then float64, as
 *   VectorIndex._exact); the k best by score descending, ties (and NaN, ranked last) by candidate order, go to
 *   out_ids (global indices) and out_scores, each at least min(k, m) long.
 *
 * fuse_min_max(a_ids, a_scores, a_weight, b_ids, b_scores, b_weight, out_ids, out_totals) -> n, or -1
 *   Two ranked lists (int64 ids, float64 scores), each scaled to w * ((s - lo) / (hi - lo)) over its own
 *   scores, or w * 1.0 when hi == lo; total(id) = 0.0 + its values, list a first, in list order; the distinct
 *   ids in first-seen order, sorted stably by total descending, go to out_ids / out_totals (each at least
 *   len(a) + len(b) long). -1, with nothing promised of the outputs, when a score or a total is NaN: the
 *   caller's path then handles it (numpy sorts NaN last).
 *
 * bm25_text_top_k(starts, terms, weights, member_texts, query_ids, members, k, out_ids, out_scores) -> n
 *   starts       int64[X+1]  distinct text x holds rows [starts[x], starts[x+1]) of terms and weights
 *   terms        int32[P]    each text's distinct term ids, ascending within the text
 *   weights      float64[P]  IDF * weight of that (text, term)
 *   member_texts int64[D]    local doc number -> its text number
 *   query_ids, members, k, out_ids, out_scores as for bm25_top_k, and the same sums and ranking: each document's
 *   score is 0.0 plus the weight of each query term its text holds, added in query order (repeats again).
 *
 * count_terms(texts, term_of, fold) -> (terms, counts, pairs, sizes), four bytes objects
 *   texts   a list of str; term_of a mapping (folded token -> term id, ``__missing__`` adding new ones);
 *   fold    the Python tokenizer of a non-ASCII stretch (``folded_stretch``).
 *   A text's tokens are folded_tokens': the runs of [A-Za-z0-9], lowercased, of its ASCII parts, then the tokens
 *   ``fold`` gives for each stretch around its non-ASCII characters (see tokens_of), in that order. Each
 *   distinct token of the batch is looked up in term_of once, in order of first occurrence (so new term ids come
 *   in the order a per-token lookup would give them). Per text: its distinct term ids ascending (int32 terms) with
 *   their counts (int32), its number of distinct terms (int64 pairs) and of tokens (int64 sizes).
 *
 * plain_hits(hits, hit_type, group, group_of, checked_type, all_kept) -> checked_type(ids, scores, contents, 0,
 *                                                                             all_kept[len(hits)]), or None
 *   evaluation/hits.py's one-pass check of a recall's list in C: every element exactly of hit_type, its ids a tuple
 *   of one str that group_of (a dict) maps to group, its score a finite float, its content a str, no (ids, content)
 *   twice. None when any of that fails (the rule-by-rule check then decides and words it). checked_type is a tuple
 *   subclass of five fields (the named tuple Checked), all_kept a tuple whose item n is (0, ..., n - 1) for the
 *   usual lengths (a longer list gets range(n) as a tuple). A hit's three fields are read straight from their
 *   slots when hit_type declares them as __slots__ (its member descriptors give the offsets), else by getattr.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A C-contiguous buffer of one item kind: 'i' int32, 'q' int64, 'f' float32, 'd' float64 (numpy's codes). */
static int get_array(PyObject *obj, Py_buffer *view, char kind, int writable, const char *name) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) return -1;
    const char *f = view->format ? view->format : "B";
    if (*f == '<' || *f == '=' || *f == '@') f++;
    char got = f[0];
    if (got == 'l' && view->itemsize == 8) got = 'q';
    if ((got == 'i' || got == 'f') && view->itemsize != 4) got = '?';
    if (got != kind || f[1] != '\0') {
        PyErr_Format(PyExc_TypeError, "kernel: %s must be a C-contiguous %s array", name,
                     kind == 'i' ? "int32" : kind == 'q' ? "int64" : kind == 'f' ? "float32" : "float64");
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

#define N_OF(view, type) ((view).len / (Py_ssize_t)sizeof(type))

typedef struct {
    double score;
    Py_ssize_t at;
} Entry;

/* a ranks below b: a lower score (NaN lowest of all), or the same score (both NaN) and a later position */
static inline int below(const Entry *a, const Entry *b) {
    const int a_nan = a->score != a->score, b_nan = b->score != b->score;
    if (a_nan != b_nan) return a_nan;
    return a->score < b->score || ((a_nan || a->score == b->score) && a->at > b->at);
}

static void sift_down(Entry *heap, Py_ssize_t n, Py_ssize_t i) {
    for (;;) {
        Py_ssize_t w = i, l = 2 * i + 1, r = l + 1;
        if (l < n && below(&heap[l], &heap[w])) w = l;
        if (r < n && below(&heap[r], &heap[w])) w = r;
        if (w == i) return;
        Entry t = heap[i]; heap[i] = heap[w]; heap[w] = t;
        i = w;
    }
}

static void sift_up(Entry *heap, Py_ssize_t i) {
    while (i > 0) {
        Py_ssize_t p = (i - 1) / 2;
        if (!below(&heap[i], &heap[p])) return;
        Entry t = heap[i]; heap[i] = heap[p]; heap[p] = t;
        i = p;
    }
}

/* Keep the k best seen so far in a heap of n <= k entries whose root ranks lowest; offered in position order, so
 * an entry tying the root comes later and loses. */
static void heap_offer(Entry *heap, Py_ssize_t *n, Py_ssize_t k, Entry e) {
    if (*n < k) {
        heap[*n] = e;
        sift_up(heap, (*n)++);
    } else if (k > 0 && below(&heap[0], &e)) {
        heap[0] = e;
        sift_down(heap, *n, 0);
    }
}

/* Empty the heap best first: out_ids[j] = ids[at of the j-th best], out_scores[j] its score. */
static void heap_drain(Entry *heap, Py_ssize_t n, const int64_t *ids, int64_t *out_ids, double *out_scores) {
    for (Py_ssize_t left = n; left > 0; left--) {  /* the lowest first, written from the back */
        out_ids[left - 1] = ids[heap[0].at];
        out_scores[left - 1] = heap[0].score;
        heap[0] = heap[left - 1];
        sift_down(heap, left - 1, 0);
    }
}

static int ranks_first(const void *x, const void *y) {  /* qsort: score descending, then position ascending */
    const Entry *a = x, *b = y;
    if (a->score > b->score) return -1;
    if (a->score < b->score) return 1;
    return (a->at > b->at) - (a->at < b->at);
}

static PyObject *bm25_top_k(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o[7];
    Py_ssize_t k;
    if (!PyArg_ParseTuple(args, "OOOOOnOO", &o[0], &o[1], &o[2], &o[3], &o[4], &k, &o[5], &o[6])) return NULL;
    static const char kinds[7] = {'i', 'q', 'd', 'q', 'q', 'q', 'd'};
    static const char *names[7] = {"terms", "spans", "postings", "query_ids", "members", "out_ids", "out_scores"};
    Py_buffer v[7];
    int got = 0;
    PyObject *result = NULL;
    double *scores = NULL;
    Entry *heap = NULL;
    for (; got < 7; got++)
        if (get_array(o[got], &v[got], kinds[got], got >= 5, names[got]) < 0) goto done;
    const Py_ssize_t n_terms = N_OF(v[0], int32_t), n_rows = N_OF(v[2], double) / 2, n_docs = N_OF(v[4], int64_t);
    const Py_ssize_t m = N_OF(v[3], int64_t), room = N_OF(v[5], int64_t);
    if (N_OF(v[1], int64_t) != 2 * n_terms || k < 0 || N_OF(v[6], double) < room || room < (k < n_docs ? k : n_docs)) {
        PyErr_SetString(PyExc_ValueError, "bm25_top_k: inconsistent array sizes");
        goto done;
    }
    const int32_t *term = v[0].buf;
    const int64_t *span = v[1].buf, *qid = v[3].buf, *member = v[4].buf;
    const double *post = v[2].buf;
    scores = calloc(n_docs > 0 ? (size_t)n_docs : 1, sizeof(double));
    heap = malloc((k > 0 ? (size_t)k : 1) * sizeof(Entry));
    if (scores == NULL || heap == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t q = 0; q < m; q++) {
        Py_ssize_t lo = 0, hi = n_terms;  /* the first term >= qid[q] */
        while (lo < hi) {
            Py_ssize_t mid = lo + (hi - lo) / 2;
            if ((int64_t)term[mid] < qid[q]) lo = mid + 1; else hi = mid;
        }
        if (lo >= n_terms || (int64_t)term[lo] != qid[q]) continue;
        const int64_t start = span[2 * lo], end = span[2 * lo + 1];
        if (start < 0 || end < start || end > n_rows) {
            PyErr_SetString(PyExc_ValueError, "bm25_top_k: a span runs outside the postings");
            goto done;
        }
        for (int64_t r = start; r < end; r++) {
            const double doc = post[2 * r];
            if (!(doc >= 0.0 && doc < (double)n_docs)) {
                PyErr_SetString(PyExc_ValueError, "bm25_top_k: a posting names no document of the group");
                goto done;
            }
            scores[(Py_ssize_t)doc] += post[2 * r + 1];
        }
    }
    Py_ssize_t n = 0;
    for (Py_ssize_t d = 0; d < n_docs; d++)
        if (scores[d] > 0.0) heap_offer(heap, &n, k, (Entry){scores[d], d});
    heap_drain(heap, n, member, v[5].buf, v[6].buf);
    result = PyLong_FromSsize_t(n);
done:
    free(scores);
    free(heap);
    while (got-- > 0) PyBuffer_Release(&v[got]);
    return result;
}

static PyObject *vector_top_k(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o[5];
    Py_ssize_t k;
    if (!PyArg_ParseTuple(args, "OOOnOO", &o[0], &o[1], &o[2], &k, &o[3], &o[4])) return NULL;
    static const char kinds[5] = {'f', 'q', 'q', 'q', 'd'};
    static const char *names[5] = {"squared", "positions", "ids", "out_ids", "out_scores"};
    Py_buffer v[5];
    int got = 0;
    PyObject *result = NULL;
    Entry *heap = NULL;
    for (; got < 5; got++)
        if (get_array(o[got], &v[got], kinds[got], got >= 3, names[got]) < 0) goto done;
    const Py_ssize_t m = N_OF(v[0], float), n_ids = N_OF(v[2], int64_t), room = N_OF(v[3], int64_t);
    if (N_OF(v[1], int64_t) != m || k < 0 || N_OF(v[4], double) < room || room < (k < m ? k : m)) {
        PyErr_SetString(PyExc_ValueError, "vector_top_k: inconsistent array sizes");
        goto done;
    }
    const float *squared = v[0].buf;
    const int64_t *pos = v[1].buf, *ids = v[2].buf;
    for (Py_ssize_t j = 0; j < m; j++) {
        if (pos[j] < 0 || pos[j] >= n_ids) {
            PyErr_SetString(PyExc_ValueError, "vector_top_k: a position outside the group");
            goto done;
        }
    }
    heap = malloc((k > 0 ? (size_t)k : 1) * sizeof(Entry));
    if (heap == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t n = 0;
    for (Py_ssize_t j = 0; j < m; j++)  /* positions ascend: ties by position are ties by candidate order */
        heap_offer(heap, &n, k, (Entry){1.0 / (1.0 + (double)sqrtf(squared[j])), (Py_ssize_t)pos[j]});
    heap_drain(heap, n, ids, v[3].buf, v[4].buf);
    result = PyLong_FromSsize_t(n);
done:
    free(heap);
    while (got-- > 0) PyBuffer_Release(&v[got]);
    return result;
}

static PyObject *fuse_min_max(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o[6];
    double weight[2];
    if (!PyArg_ParseTuple(args, "OOdOOdOO", &o[0], &o[1], &weight[0], &o[2], &o[3], &weight[1], &o[4], &o[5]))
        return NULL;
    static const char kinds[6] = {'q', 'd', 'q', 'd', 'q', 'd'};
    static const char *names[6] = {"a_ids", "a_scores", "b_ids", "b_scores", "out_ids", "out_totals"};
    Py_buffer v[6];
    int got = 0;
    PyObject *result = NULL;
    int64_t *table = NULL;  /* open addressing: id -> its slot, or -1 */
    Entry *order = NULL;
    double *total = NULL;  /* per distinct id, in first-seen order: its total... */
    int64_t *seen = NULL;  /* ...and the id */
    for (; got < 6; got++)
        if (get_array(o[got], &v[got], kinds[got], got >= 4, names[got]) < 0) goto done;
    const Py_ssize_t len[2] = {N_OF(v[0], int64_t), N_OF(v[2], int64_t)};
    if (N_OF(v[1], double) != len[0] || N_OF(v[3], double) != len[1] || N_OF(v[4], int64_t) < len[0] + len[1]
            || N_OF(v[5], double) < len[0] + len[1]) {
        PyErr_SetString(PyExc_ValueError, "fuse_min_max: inconsistent array sizes");
        goto done;
    }
    int64_t *ids_out = v[4].buf;
    double *totals_out = v[5].buf;
    size_t cap = 16;
    while (cap < 2 * (size_t)(len[0] + len[1])) cap *= 2;
    table = malloc(cap * sizeof(int64_t));
    order = malloc((size_t)(len[0] + len[1] + 1) * sizeof(Entry));
    total = malloc((size_t)(len[0] + len[1] + 1) * sizeof(double));
    seen = malloc((size_t)(len[0] + len[1] + 1) * sizeof(int64_t));
    if (table == NULL || order == NULL || total == NULL || seen == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    memset(table, 0xff, cap * sizeof(int64_t));
    Py_ssize_t n = 0;
    for (int l = 0; l < 2; l++) {
        const int64_t *ids = v[2 * l].buf;
        const double *s = v[2 * l + 1].buf;
        if (len[l] == 0) continue;
        double lo = s[0], hi = s[0];
        for (Py_ssize_t j = 0; j < len[l]; j++) {
            if (s[j] != s[j]) { result = PyLong_FromLong(-1); goto done; }
            if (s[j] < lo) lo = s[j];
            if (s[j] > hi) hi = s[j];
        }
        const double range = hi - lo;
        for (Py_ssize_t j = 0; j < len[l]; j++) {
            const double value = hi > lo ? weight[l] * ((s[j] - lo) / range) : weight[l] * 1.0;
            size_t h = (size_t)(((uint64_t)ids[j] * 0x9E3779B97F4A7C15ULL) >> 7) & (cap - 1);
            while (table[h] >= 0 && seen[table[h]] != ids[j]) h = (h + 1) & (cap - 1);
            if (table[h] < 0) {
                table[h] = n;
                seen[n] = ids[j];
                total[n++] = 0.0 + value;
            } else {
                total[table[h]] = total[table[h]] + value;
            }
        }
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        if (total[j] != total[j]) { result = PyLong_FromLong(-1); goto done; }
        order[j].score = total[j];
        order[j].at = j;
    }
    qsort(order, (size_t)n, sizeof(Entry), ranks_first);
    for (Py_ssize_t j = 0; j < n; j++) {
        ids_out[j] = seen[order[j].at];
        totals_out[j] = order[j].score;
    }
    result = PyLong_FromSsize_t(n);
done:
    free(table);
    free(order);
    free(total);
    free(seen);
    while (got-- > 0) PyBuffer_Release(&v[got]);
    return result;
}

static PyObject *bm25_text_top_k(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o[8];
    Py_ssize_t k;
    if (!PyArg_ParseTuple(args, "OOOOOOnOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &k, &o[6], &o[7]))
        return NULL;
    static const char kinds[8] = {'q', 'i', 'd', 'q', 'q', 'q', 'q', 'd'};
    static const char *names[8] = {"starts", "terms", "weights", "member_texts", "query_ids", "members", "out_ids",
                                   "out_scores"};
    Py_buffer v[8];
    int got = 0;
    PyObject *result = NULL;
    Entry *heap = NULL;
    for (; got < 8; got++)
        if (get_array(o[got], &v[got], kinds[got], got >= 6, names[got]) < 0) goto done;
    const Py_ssize_t n_texts = N_OF(v[0], int64_t) - 1, n_rows = N_OF(v[1], int32_t);
    const Py_ssize_t n_docs = N_OF(v[3], int64_t), m = N_OF(v[4], int64_t), room = N_OF(v[6], int64_t);
    if (n_texts < 0 || N_OF(v[2], double) != n_rows || N_OF(v[5], int64_t) != n_docs || k < 0 ||
        N_OF(v[7], double) < room || room < (k < n_docs ? k : n_docs)) {
        PyErr_SetString(PyExc_ValueError, "bm25_text_top_k: inconsistent array sizes");
        goto done;
    }
    const int64_t *start = v[0].buf, *text = v[3].buf, *qid = v[4].buf;
    const int32_t *term = v[1].buf;
    const double *weight = v[2].buf;
    heap = malloc((k > 0 ? (size_t)k : 1) * sizeof(Entry));
    if (heap == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t n = 0;
    for (Py_ssize_t d = 0; d < n_docs; d++) {
        const int64_t x = text[d];
        if (x < 0 || x >= n_texts || start[x] < 0 || start[x + 1] < start[x] || start[x + 1] > n_rows) {
            PyErr_SetString(PyExc_ValueError, "bm25_text_top_k: a document names no text of the postings");
            goto done;
        }
        double score = 0.0;
        for (Py_ssize_t q = 0; q < m; q++) {
            int64_t lo = start[x], hi = start[x + 1];  /* the first of the text's terms >= qid[q] */
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if ((int64_t)term[mid] < qid[q]) lo = mid + 1; else hi = mid;
            }
            if (lo < start[x + 1] && (int64_t)term[lo] == qid[q]) score += weight[lo];
        }
        if (score > 0.0) heap_offer(heap, &n, k, (Entry){score, d});
    }
    heap_drain(heap, n, v[5].buf, v[6].buf, v[7].buf);
    result = PyLong_FromSsize_t(n);
done:
    free(heap);
    while (got-- > 0) PyBuffer_Release(&v[got]);
    return result;
}

#define ALNUM(c) (((c) >= 'a' && (c) <= 'z') || ((c) >= 'A' && (c) <= 'Z') || ((c) >= '0' && (c) <= '9'))

#include "../_vec.h"

/* The batch's distinct ASCII tokens: open addressing on FNV-1a, each slot a local id (-1 empty) with the hash, length
 * and characters (those of its str in ``distinct``, which keeps them alive) side by side, so a probe reads one
 * slot. */
typedef struct {
    uint64_t hash;
    const char *data;
    int32_t id, len;
} Slot;

typedef struct {
    Slot *slot;
    size_t cap, used;
} Table;

static uint64_t fnv1a(const char *s, Py_ssize_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (Py_ssize_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

static int table_grow(Table *t, PyObject *distinct) {
    size_t cap = t->cap ? 2 * t->cap : 4096;
    Slot *slot = malloc(cap * sizeof(Slot));
    if (slot == NULL) return -1;
    for (size_t i = 0; i < cap; i++) slot[i].id = -1;
    for (size_t i = 0; i < t->cap; i++) {
        if (t->slot[i].id < 0) continue;
        size_t j = t->slot[i].hash & (cap - 1);
        while (slot[j].id >= 0) j = (j + 1) & (cap - 1);
        slot[j] = t->slot[i];
    }
    free(t->slot);
    t->slot = slot, t->cap = cap;
    (void)distinct;
    return 0;
}

/* a[0:n) == b[0:n): a loop for the short tokens of text (no call), memcmp past 16 bytes. */
static inline int same_bytes(const char *a, const char *b, Py_ssize_t n) {
    if (n > 16) return memcmp(a, b, (size_t)n) == 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

/* Push one int32 onto ``v`` (a Vec of int32): vec_push without the call and the copy of a variable size. */
static inline int push_int32(Vec *v, int32_t x) {
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 1024;
        char *data = realloc(v->data, cap * sizeof(int32_t));
        if (data == NULL) return -1;
        v->data = data, v->cap = cap;
    }
    ((int32_t *)v->data)[v->n++] = x;
    return 0;
}

/* The local id of the ASCII token s[0:n] (lowercase; h its fnv1a), adding it to the table and to ``distinct`` when
 * new. */
static int32_t ascii_id_hashed(Table *t, PyObject *distinct, const char *s, Py_ssize_t n, uint64_t h) {
    if (2 * (t->used + 1) > t->cap && table_grow(t, distinct) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    size_t j = h & (t->cap - 1);
    while (t->slot[j].id >= 0) {
        const Slot *at = &t->slot[j];
        if (at->hash == h && at->len == n && same_bytes(at->data, s, n)) return at->id;
        j = (j + 1) & (t->cap - 1);
    }
    if (n >= INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "count_terms: a token too long");
        return -1;
    }
    PyObject *token = PyUnicode_FromStringAndSize(s, n);
    if (token == NULL) return -1;
    const Py_ssize_t id = PyList_GET_SIZE(distinct);
    if (id >= INT32_MAX || PyList_Append(distinct, token) < 0) {
        Py_DECREF(token);
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_OverflowError, "count_terms: too many distinct tokens");
        return -1;
    }
    Py_DECREF(token);
    t->slot[j] = (Slot){h, (const char *)PyUnicode_DATA(token), (int32_t)id, (int32_t)n};
    t->used++;
    return (int32_t)id;
}

static int32_t ascii_id(Table *t, PyObject *distinct, const char *s, Py_ssize_t n) {
    return ascii_id_hashed(t, distinct, s, n, fnv1a(s, n));
}

#define TOKEN_ROOM 256

/* The ASCII tokens of text[lo:hi) (no character there above 127) onto ``occ``; the count, -1 on error. Each token
 * is lowercased into ``room`` (``scratch`` past TOKEN_ROOM characters) and hashed on the way. */
static inline __attribute__((always_inline)) Py_ssize_t ascii_tokens_of_kind(
        int kind, const void *data, Py_ssize_t lo, Py_ssize_t hi, Table *t, PyObject *distinct, Vec *occ,
        Vec *scratch) {
    Py_ssize_t count = 0;
    char room[TOKEN_ROOM];
    const Py_UCS1 *one = kind == PyUnicode_1BYTE_KIND ? data : NULL;
    for (Py_ssize_t i = lo; i < hi;) {
        if (one != NULL) {
            while (i < hi && !ALNUM(one[i])) i++;
        } else {
            while (i < hi && !ALNUM(PyUnicode_READ(kind, data, i))) i++;
        }
        if (i >= hi) break;
        Py_ssize_t n = 0;
        uint64_t h = 1469598103934665603ULL;
        char *token = room;
        scratch->n = 0;
        for (; i < hi; i++, n++) {
            const Py_UCS4 u = one != NULL ? one[i] : PyUnicode_READ(kind, data, i);
            if (!ALNUM(u)) break;
            const char c = u >= 'A' && u <= 'Z' ? (char)(u + 32) : (char)u;
            h = (h ^ (unsigned char)c) * 1099511628211ULL;
            if (n < TOKEN_ROOM) {
                room[n] = c;
                continue;
            }
            if (n == TOKEN_ROOM) {  /* a long token: on to the growable buffer */
                for (Py_ssize_t j = 0; j < TOKEN_ROOM; j++)
                    if (vec_push(scratch, &room[j]) < 0) goto nomem;
            }
            if (vec_push(scratch, &c) < 0) goto nomem;
        }
        if (n > TOKEN_ROOM) token = scratch->data;
        int32_t id = ascii_id_hashed(t, distinct, token, n, h);
        if (id < 0) return -1;
        if (push_int32(occ, id) < 0) goto nomem;
        count++;
    }
    return count;
nomem:
    PyErr_NoMemory();
    return -1;
}

/* ascii_tokens_of_kind with the kind a constant in each copy (no switch per character). */
static Py_ssize_t ascii_tokens(int kind, const void *data, Py_ssize_t lo, Py_ssize_t hi, Table *t, PyObject *distinct,
                               Vec *occ, Vec *scratch) {
    switch (kind) {
    case PyUnicode_1BYTE_KIND: return ascii_tokens_of_kind(PyUnicode_1BYTE_KIND, data, lo, hi, t, distinct, occ, scratch);
    case PyUnicode_2BYTE_KIND: return ascii_tokens_of_kind(PyUnicode_2BYTE_KIND, data, lo, hi, t, distinct, occ, scratch);
    default: return ascii_tokens_of_kind(PyUnicode_4BYTE_KIND, data, lo, hi, t, distinct, occ, scratch);
    }
}

/* The first position at or after i of a character above 127 (len when none), for the kind a constant. */
static inline __attribute__((always_inline)) Py_ssize_t next_high_of_kind(int kind, const void *data, Py_ssize_t i,
                                                                           Py_ssize_t len) {
    while (i < len && PyUnicode_READ(kind, data, i) < 128) i++;
    return i;
}

static Py_ssize_t next_high(int kind, const void *data, Py_ssize_t i, Py_ssize_t len) {
    switch (kind) {
    case PyUnicode_1BYTE_KIND: return next_high_of_kind(PyUnicode_1BYTE_KIND, data, i, len);
    case PyUnicode_2BYTE_KIND: return next_high_of_kind(PyUnicode_2BYTE_KIND, data, i, len);
    default: return next_high_of_kind(PyUnicode_4BYTE_KIND, data, i, len);
    }
}

/* The tokens ``fold(stretch)`` returns (folded tokens of a non-ASCII stretch) onto ``occ``; the count, -1 on error. */
static Py_ssize_t stretch_tokens(PyObject *stretch, PyObject *fold, Table *t, PyObject *distinct, PyObject *other,
                                 Vec *occ) {
    PyObject *tokens = PyObject_CallOneArg(fold, stretch);
    if (tokens == NULL) return -1;
    PyObject *seq = PySequence_Fast(tokens, "count_terms: fold must return a list of str");
    Py_DECREF(tokens);
    if (seq == NULL) return -1;
    Py_ssize_t count = 0;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *token = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyUnicode_Check(token)) {
            PyErr_SetString(PyExc_TypeError, "count_terms: fold must return a list of str");
            goto fail;
        }
        int32_t id;
        if (PyUnicode_IS_ASCII(token)) {
            id = ascii_id(t, distinct, PyUnicode_DATA(token), PyUnicode_GET_LENGTH(token));
            if (id < 0) goto fail;
        } else {
            PyObject *known = PyDict_GetItemWithError(other, token);
            if (known != NULL) {
                id = (int32_t)PyLong_AsLong(known);
            } else {
                if (PyErr_Occurred()) goto fail;
                const Py_ssize_t next = PyList_GET_SIZE(distinct);
                PyObject *value = PyLong_FromSsize_t(next);
                if (value == NULL || next >= INT32_MAX || PyDict_SetItem(other, token, value) < 0 ||
                    PyList_Append(distinct, token) < 0) {
                    Py_XDECREF(value);
                    if (!PyErr_Occurred()) PyErr_SetString(PyExc_OverflowError, "count_terms: too many tokens");
                    goto fail;
                }
                Py_DECREF(value);
                id = (int32_t)next;
            }
        }
        if (vec_push(occ, &id) < 0) {
            PyErr_NoMemory();
            goto fail;
        }
        count++;
    }
    Py_DECREF(seq);
    return count;
fail:
    Py_DECREF(seq);
    return -1;
}

/* Tokens of one text onto ``occ`` as local ids, in folded_tokens' order: the ASCII parts' tokens first, then each
 * non-ASCII stretch's (a run of characters above 127 widened over the ASCII letters and digits touching it,
 * stretches that touch merged) as ``fold`` gives them; returns the number of tokens, -1 on error. */
static Py_ssize_t tokens_of(PyObject *text, PyObject *fold, Table *t, PyObject *distinct, PyObject *other,
                            Vec *occ, Vec *scratch, Vec *spans) {
    const int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    const Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    if (PyUnicode_IS_ASCII(text)) return ascii_tokens(kind, data, 0, len, t, distinct, occ, scratch);
    spans->n = 0;
    for (Py_ssize_t i = 0; i < len;) {
        i = next_high(kind, data, i, len);
        if (i >= len) break;
        Py_ssize_t span[2] = {i, i};
        while (i < len && PyUnicode_READ(kind, data, i) >= 128) i++;
        while (i < len && ALNUM(PyUnicode_READ(kind, data, i))) i++;
        span[1] = i;
        while (span[0] > 0 && ALNUM(PyUnicode_READ(kind, data, span[0] - 1))) span[0]--;
        Py_ssize_t *last = spans->n ? (Py_ssize_t *)(spans->data + (spans->n - 1) * spans->size) : NULL;
        if (last != NULL && span[0] <= last[1]) last[1] = span[1];
        else if (vec_push(spans, span) < 0) {
            PyErr_NoMemory();
            return -1;
        }
    }
    const Py_ssize_t *span = (const Py_ssize_t *)spans->data;
    Py_ssize_t count = 0, from = 0, got;
    for (size_t j = 0; j <= spans->n; j++) {  /* the ASCII parts around the stretches */
        const Py_ssize_t to = j < spans->n ? span[2 * j] : len;
        if ((got = ascii_tokens(kind, data, from, to, t, distinct, occ, scratch)) < 0) return -1;
        count += got;
        if (j < spans->n) from = span[2 * j + 1];
    }
    for (size_t j = 0; j < spans->n; j++) {
        PyObject *stretch = PyUnicode_Substring(text, span[2 * j], span[2 * j + 1]);
        if (stretch == NULL) return -1;
        got = stretch_tokens(stretch, fold, t, distinct, other, occ);
        Py_DECREF(stretch);
        if (got < 0) return -1;
        count += got;
    }
    return count;
}

static int int32_ascending(const void *x, const void *y) {
    const int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* a[0:n) ascending: quicksort (median of three, the smaller side first) over insertion sort for short runs, and
 * qsort past a depth limit; the same order as qsort with int32_ascending, without a call per comparison. */
static void sort_int32(int32_t *a, size_t n, int depth) {
    while (n > 16) {
        if (depth-- == 0) {
            qsort(a, n, sizeof(int32_t), int32_ascending);
            return;
        }
        int32_t x = a[0], y = a[n / 2], z = a[n - 1];
        const int32_t pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        size_t i = 0, j = n - 1;
        for (;;) {
            while (a[i] < pivot) i++;
            while (a[j] > pivot) j--;
            if (i >= j) break;
            const int32_t t = a[i];
            a[i] = a[j], a[j] = t;
            i++, j--;
        }
        const size_t left = j + 1;
        if (left < n - left) {
            sort_int32(a, left, depth);
            a += left, n -= left;
        } else {
            sort_int32(a + left, n - left, depth);
            n = left;
        }
    }
    for (size_t i = 1; i < n; i++) {
        const int32_t v = a[i];
        size_t j = i;
        for (; j > 0 && a[j - 1] > v; j--) a[j] = a[j - 1];
        a[j] = v;
    }
}

static PyObject *count_terms(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *texts, *term_of, *folded;  /* folded: the stretch tokenizer */
    if (!PyArg_ParseTuple(args, "O!OO", &PyList_Type, &texts, &term_of, &folded)) return NULL;
    const Py_ssize_t n_texts = PyList_GET_SIZE(texts);
    PyObject *distinct = PyList_New(0), *other = PyDict_New(), *result = NULL;
    Table table = {NULL, 0, 0};
    Vec occ = {NULL, 0, 0, sizeof(int32_t)}, scratch = {NULL, 0, 0, 1}, spans = {NULL, 0, 0, 2 * sizeof(Py_ssize_t)};
    int64_t *sizes = malloc((n_texts ? (size_t)n_texts : 1) * sizeof(int64_t));
    int64_t *pairs = malloc((n_texts ? (size_t)n_texts : 1) * sizeof(int64_t));
    int32_t *term_of_local = NULL, *count = NULL, *touched = NULL, *out_terms = NULL, *out_counts = NULL;
    if (distinct == NULL || other == NULL || sizes == NULL || pairs == NULL) goto nomem;
    for (Py_ssize_t x = 0; x < n_texts; x++) {
        PyObject *text = PyList_GET_ITEM(texts, x);
        if (!PyUnicode_Check(text)) {
            PyErr_SetString(PyExc_TypeError, "count_terms: texts must be a list of str");
            goto done;
        }
        Py_ssize_t got = tokens_of(text, folded, &table, distinct, other, &occ, &scratch, &spans);
        if (got < 0) goto done;
        sizes[x] = got;
    }
    const Py_ssize_t n_distinct = PyList_GET_SIZE(distinct);
    term_of_local = malloc((n_distinct ? (size_t)n_distinct : 1) * sizeof(int32_t));
    if (term_of_local == NULL) goto nomem;
    int64_t width = 1;
    for (Py_ssize_t i = 0; i < n_distinct; i++) {  /* in order of first occurrence */
        PyObject *id = PyObject_GetItem(term_of, PyList_GET_ITEM(distinct, i));
        if (id == NULL) goto done;
        long value = PyLong_AsLong(id);
        Py_DECREF(id);
        if (value == -1 && PyErr_Occurred()) goto done;
        if (value < 0 || value >= INT32_MAX) {
            PyErr_SetString(PyExc_ValueError, "count_terms: a term id outside int32");
            goto done;
        }
        term_of_local[i] = (int32_t)value;
        if (value + 1 > width) width = value + 1;
    }
    count = calloc((size_t)width, sizeof(int32_t));
    touched = malloc((size_t)width * sizeof(int32_t));
    out_terms = malloc((occ.n ? occ.n : 1) * sizeof(int32_t));
    out_counts = malloc((occ.n ? occ.n : 1) * sizeof(int32_t));
    if (count == NULL || touched == NULL || out_terms == NULL || out_counts == NULL) goto nomem;
    const int32_t *local = (const int32_t *)occ.data;
    size_t at = 0, out = 0;
    for (Py_ssize_t x = 0; x < n_texts; x++) {
        size_t nt = 0;
        for (int64_t j = 0; j < sizes[x]; j++, at++) {
            const int32_t term = term_of_local[local[at]];
            if (count[term]++ == 0) touched[nt++] = term;
        }
        sort_int32(touched, nt, 64);
        for (size_t j = 0; j < nt; j++, out++) {
            out_terms[out] = touched[j];
            out_counts[out] = count[touched[j]];
            count[touched[j]] = 0;
        }
        pairs[x] = (int64_t)nt;
    }
    result = Py_BuildValue("(y#y#y#y#)", (const char *)out_terms, (Py_ssize_t)(out * sizeof(int32_t)),
                           (const char *)out_counts, (Py_ssize_t)(out * sizeof(int32_t)),
                           (const char *)pairs, (Py_ssize_t)(n_texts * sizeof(int64_t)),
                           (const char *)sizes, (Py_ssize_t)(n_texts * sizeof(int64_t)));
    goto done;
nomem:
    PyErr_NoMemory();
done:
    Py_XDECREF(distinct);
    Py_XDECREF(other);
    free(table.slot), free(occ.data), free(scratch.data), free(spans.data);
    free(sizes), free(pairs), free(term_of_local), free(count), free(touched), free(out_terms), free(out_counts);
    return result;
}

#define PLAIN_PAIRWISE 64  /* up to this many hits, distinct ids are checked pairwise (no set) */

/* checked_type(ids, scores, contents, 0, kept) with kept = all_kept[n] (or range(n) past it), stealing the three
 * tuples' references; NULL on error. */
static PyObject *checked(PyObject *checked_type, PyObject *all_kept, PyObject *ids, PyObject *scores,
                         PyObject *contents) {
    const Py_ssize_t n = PyTuple_GET_SIZE(ids);
    PyObject *kept;
    if (n < PyTuple_GET_SIZE(all_kept)) {
        kept = PyTuple_GET_ITEM(all_kept, n);
        Py_INCREF(kept);
    } else {
        kept = PyTuple_New(n);
        for (Py_ssize_t i = 0; kept != NULL && i < n; i++) {
            PyObject *at = PyLong_FromSsize_t(i);
            if (at == NULL) Py_CLEAR(kept);
            else PyTuple_SET_ITEM(kept, i, at);
        }
    }
    PyObject *zero = PyLong_FromLong(0);
    PyTypeObject *type = (PyTypeObject *)checked_type;
    PyObject *out = kept != NULL && zero != NULL ? type->tp_alloc(type, 5) : NULL;
    if (out == NULL) {
        Py_XDECREF(kept), Py_XDECREF(zero), Py_DECREF(ids), Py_DECREF(scores), Py_DECREF(contents);
        return NULL;
    }
    PyTuple_SET_ITEM(out, 0, ids);
    PyTuple_SET_ITEM(out, 1, scores);
    PyTuple_SET_ITEM(out, 2, contents);
    PyTuple_SET_ITEM(out, 3, zero);
    PyTuple_SET_ITEM(out, 4, kept);
    /* Nothing here can be part of a reference cycle (tuples of strings, floats and ints, and the one-string id
       tuples), so none is left for the cyclic collector to traverse: what CPython's collector does lazily to such
       tuples, done now. A run keeps one Checked per recall; tracked, they made the collector run through them over
       and over (a few microseconds per recall). */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *one = PyTuple_GET_ITEM(ids, i);  /* an exact tuple of one exact str (plain_hits checked) */
        if (PyObject_GC_IsTracked(one)) PyObject_GC_UnTrack(one);
    }
    PyObject *parts[4] = {ids, scores, contents, out};
    for (int j = 0; j < 4; j++)
        if (PyObject_GC_IsTracked(parts[j])) PyObject_GC_UnTrack(parts[j]);
    return out;
}

/* The offsets of hit_type's slots ids, score and content (member descriptors of object fields), found once per
 * type; 0 where the type does not declare them so (plain_hits then reads them by getattr). */
static PyObject *slot_type = NULL;
static Py_ssize_t slot_at[3] = {0, 0, 0};

static void find_slots(PyObject *hit_type) {
    static const char *names[3] = {"ids", "score", "content"};
    if (slot_type == hit_type) return;
    Py_ssize_t at[3] = {0, 0, 0};
    for (int f = 0; f < 3 && PyType_Check(hit_type); f++) {
        PyObject *d = PyDict_GetItemString(((PyTypeObject *)hit_type)->tp_dict, names[f]);  /* borrowed */
        if (d == NULL || !Py_IS_TYPE(d, &PyMemberDescr_Type)) break;
        PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
        if (m->type != T_OBJECT_EX || m->offset <= 0) break;
        at[f] = m->offset;
    }
    Py_XINCREF(hit_type);
    Py_XSETREF(slot_type, hit_type);
    for (int f = 0; f < 3; f++) slot_at[f] = at[0] && at[1] && at[2] ? at[f] : 0;
}

/* A hit's field f (a new reference), from its slot where find_slots found one, else by getattr; NULL with no
 * error set for an empty slot. */
static inline PyObject *hit_field(PyObject *hit, int f, PyObject *name) {
    if (slot_at[f]) {
        PyObject *v = *(PyObject **)((char *)hit + slot_at[f]);
        Py_XINCREF(v);
        return v;
    }
    return PyObject_GetAttr(hit, name);
}

static PyObject *plain_hits(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *hits, *hit_type, *group, *group_of, *checked_type, *all_kept;
    if (!PyArg_ParseTuple(args, "O!OUO!O!O!", &PyList_Type, &hits, &hit_type, &group, &PyDict_Type, &group_of,
                          &PyType_Type, &checked_type, &PyTuple_Type, &all_kept))
        return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)checked_type, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "plain_hits: checked_type must be a tuple subclass");
        return NULL;
    }
    static PyObject *name_ids = NULL, *name_score = NULL, *name_content = NULL;
    if (name_ids == NULL) {
        name_ids = PyUnicode_InternFromString("ids");
        name_score = PyUnicode_InternFromString("score");
        name_content = PyUnicode_InternFromString("content");
        if (name_ids == NULL || name_score == NULL || name_content == NULL) return NULL;
    }
    find_slots(hit_type);
    const Py_ssize_t n = PyList_GET_SIZE(hits);
    PyObject *ids = PyTuple_New(n), *scores = PyTuple_New(n), *contents = PyTuple_New(n), *seen = NULL;
    if (ids == NULL || scores == NULL || contents == NULL) goto error;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *hit = PyList_GET_ITEM(hits, i);
        if ((PyObject *)Py_TYPE(hit) != hit_type) goto plain_not;
        PyObject *id_tuple = hit_field(hit, 0, name_ids);
        if (id_tuple == NULL) goto field_missing;
        PyTuple_SET_ITEM(ids, i, id_tuple);
        PyObject *score = hit_field(hit, 1, name_score);
        if (score == NULL) goto field_missing;
        PyTuple_SET_ITEM(scores, i, score);
        PyObject *content = hit_field(hit, 2, name_content);
        if (content == NULL) goto field_missing;
        PyTuple_SET_ITEM(contents, i, content);
        if (!PyTuple_CheckExact(id_tuple) || PyTuple_GET_SIZE(id_tuple) != 1 || !PyFloat_CheckExact(score) ||
            !isfinite(PyFloat_AS_DOUBLE(score)) || !PyUnicode_CheckExact(content))
            goto plain_not;
        PyObject *only = PyTuple_GET_ITEM(id_tuple, 0);
        if (!PyUnicode_CheckExact(only)) goto plain_not;
        PyObject *g = PyDict_GetItemWithError(group_of, only);
        if (g == NULL) {
            if (PyErr_Occurred()) goto error;
            goto plain_not;
        }
        if (g != group) {
            if (!PyUnicode_CheckExact(g)) goto plain_not;
            const int same = PyUnicode_Compare(g, group);
            if (same == -1 && PyErr_Occurred()) goto error;
            if (same != 0) goto plain_not;
        }
    }
    /* No hit repeated: when the hits' single ids are all distinct (told apart by their hashes, which the group
       look-up above computed and each string keeps, and by value only where two hashes are equal), no two hits can
       be the same; only a list where two hits share an id (distinct memories of one item) takes the set of
       (ids, content) pairs. */
    if (n <= PLAIN_PAIRWISE) {
        Py_hash_t hashes[PLAIN_PAIRWISE];
        int shared = 0;
        for (Py_ssize_t i = 0; i < n && !shared; i++) {
            PyObject *a = PyTuple_GET_ITEM(PyTuple_GET_ITEM(ids, i), 0);
            hashes[i] = PyObject_Hash(a);
            if (hashes[i] == -1) goto error;
            for (Py_ssize_t j = 0; j < i && !shared; j++) {
                if (hashes[j] != hashes[i]) continue;
                const int same = PyUnicode_Compare(a, PyTuple_GET_ITEM(PyTuple_GET_ITEM(ids, j), 0));
                if (same == -1 && PyErr_Occurred()) goto error;
                shared = same == 0;
            }
        }
        if (!shared) return checked(checked_type, all_kept, ids, scores, contents);
    }
    seen = PySet_New(NULL);
    if (seen == NULL) goto error;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *key = PyTuple_Pack(2, PyTuple_GET_ITEM(ids, i), PyTuple_GET_ITEM(contents, i));
        if (key == NULL) goto error;
        const int had = PySet_Contains(seen, key);
        const int added = had == 0 ? PySet_Add(seen, key) : 0;
        Py_DECREF(key);
        if (had < 0 || added < 0) goto error;
        if (had) goto plain_not;
    }
    Py_DECREF(seen);
    return checked(checked_type, all_kept, ids, scores, contents);
field_missing:
    if (PyErr_Occurred()) goto error;
plain_not:
    Py_XDECREF(ids), Py_XDECREF(scores), Py_XDECREF(contents), Py_XDECREF(seen);
    Py_RETURN_NONE;
error:
    Py_XDECREF(ids), Py_XDECREF(scores), Py_XDECREF(contents), Py_XDECREF(seen);
    return NULL;
}

static PyMethodDef methods[] = {
    {"bm25_top_k", bm25_top_k, METH_VARARGS, "One BM25 query's top k over one group's postings (see the source)."},
    {"vector_top_k", vector_top_k, METH_VARARGS, "The vector leg's scores and top k from squared distances."},
    {"fuse_min_max", fuse_min_max, METH_VARARGS, "Min-max score fusion of two ranked lists (see the source)."},
    {"bm25_text_top_k", bm25_text_top_k, METH_VARARGS, "One BM25 query's top k over per-text postings (see the source)."},
    {"count_terms", count_terms, METH_VARARGS, "A batch of texts' term ids and counts (see the source)."},
    {"plain_hits", plain_hits, METH_VARARGS, "check_hits' one-pass check of a plain hit list (see the source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kernels", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__kernels(void) { return PyModule_Create(&module); }
