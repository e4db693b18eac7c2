/* The compiled core of the scanner's per-candidate loop (diag/scan/core.py explains when it is used).
 *
 * Each function is the C form of a Python loop that stays as the fallback and gives the same result
 * (tests/scan/test_core.py compares them, on random bytes too):
 *
 *   Collector, lines(block, ends, exprs, members, unions)
 *       diag.scan.engines.HyperscanEngine.lines: Hyperscan's matches recorded without a Python call
 *       each, then the candidate lines holding them with the patterns to try (engines.lines_of_ends).
 *   digest(block, lines, frame, scanner, folder, slow)
 *       diag.scan.scanner.Scanner.digest_block: frame each candidate line's NCCL prefix on its bytes
 *       (PCRE2 with JIT, the same pattern as diag.input.framing.COMMON_NCCL_BYTES), look its payload
 *       up in the scanner's memo or confirm it with the signatures' PCRE2 forms, fold a repeat that
 *       folding already knows, ship the rest.
 *   count_newlines(block, starts)
 *       diag.input.lines.count_newlines.
 *   compile(pattern, anchored), match(regex, subject)
 *       PCRE2 patterns for the above, and their spans for the tests.
 *
 * Everything that decides what a report says (confirming a payload the first time, describing matches
 * for the fold, every fold that changes state, the ordered apply) is still done by the Python code,
 * called from here; the core only does work whose outcome it can show equal: reading the prefix, a
 * dictionary look-up, matching a pattern proven to mean the same, and counting a repeat whose fold key
 * Python's folding has already seen.
 *
 * Safety on arbitrary bytes: every offset taken from Python is checked against the block's length
 * and every read stays inside [0, len).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#define MAX_UNIONS 4096
#define MAX_LAST_IDS 16 /* expressions on one line whose union the next line may reuse */

static PyObject *one; /* the int 1 */
static PyObject *levels[5]; /* b"INFO", ...: the levels the NCCL prefix reads, one object each */
static const char *level_names[5] = {"INFO", "WARN", "TRACE", "CALL", "ERROR"};

/* The level as bytes (new reference): a shared object for the five NCCL levels. */
static PyObject *level_bytes(const char *at, Py_ssize_t len) {
    for (int i = 0; i < 5; i++)
        if ((Py_ssize_t)strlen(level_names[i]) == len && memcmp(level_names[i], at, len) == 0) {
            Py_INCREF(levels[i]);
            return levels[i];
        }
    return PyBytes_FromStringAndSize(at, len);
}

/* --- lines ---------------------------------------------------------------------------------- */

typedef struct {
    Py_ssize_t end;
    Py_ssize_t expr;
} Hit;

static int hit_cmp(const void *a, const void *b) {
    const Hit *x = a, *y = b;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return (x->expr > y->expr) - (x->expr < y->expr);
}

/* The line holding pos, as diag.scan.engines.line_span reads it: from after the last \n or \r before
 * pos to the first one at or after pos (or the block's end). */
static void line_span(const unsigned char *s, Py_ssize_t n, Py_ssize_t pos, Py_ssize_t *start, Py_ssize_t *stop) {
    if (pos > n)
        pos = n;
    /* backwards: the last \n before pos, then a lone \r after it (memrchr/memchr: SIMD, not a loop per byte) */
    const unsigned char *nl = pos ? memrchr(s, '\n', pos) : NULL;
    Py_ssize_t from = nl ? nl - s + 1 : 0;
    const unsigned char *cr = pos > from ? memrchr(s + from, '\r', pos - from) : NULL;
    *start = cr ? cr - s + 1 : from;
    /* forwards: the first \n at or after pos, or a \r before it */
    nl = pos < n ? memchr(s + pos, '\n', n - pos) : NULL;
    Py_ssize_t to = nl ? nl - s : n;
    cr = to > pos ? memchr(s + pos, '\r', to - pos) : NULL;
    *stop = cr ? cr - s : to;
}

/* The union of members[e] for the exprs of one line, shared through ``unions`` (keyed by the sorted
 * tuple of expr ids) so that equal sets are one object. New reference. */
static PyObject *members_union(PyObject *members, PyObject *unions, const Py_ssize_t *ids, Py_ssize_t k) {
    if (k == 1) {
        PyObject *m = PyList_GET_ITEM(members, ids[0]);
        Py_INCREF(m);
        return m;
    }
    PyObject *key = PyTuple_New(k);
    if (!key)
        return NULL;
    for (Py_ssize_t j = 0; j < k; j++) {
        PyObject *v = PyLong_FromSsize_t(ids[j]);
        if (!v) {
            Py_DECREF(key);
            return NULL;
        }
        PyTuple_SET_ITEM(key, j, v);
    }
    PyObject *found = PyDict_GetItemWithError(unions, key);
    if (found) {
        Py_INCREF(found);
        Py_DECREF(key);
        return found;
    }
    if (PyErr_Occurred()) {
        Py_DECREF(key);
        return NULL;
    }
    PyObject *frozen = PyList_GET_ITEM(members, ids[0]);
    Py_INCREF(frozen);
    for (Py_ssize_t j = 1; j < k && frozen; j++) {
        PyObject *next = PyNumber_Or(frozen, PyList_GET_ITEM(members, ids[j]));
        Py_DECREF(frozen);
        frozen = next;
    }
    if (!frozen) {
        Py_DECREF(key);
        return NULL;
    }
    if (PyDict_GET_SIZE(unions) >= MAX_UNIONS)
        PyDict_Clear(unions);
    if (PyDict_SetItem(unions, key, frozen) < 0) {
        Py_DECREF(key);
        Py_DECREF(frozen);
        return NULL;
    }
    Py_DECREF(key);
    return frozen;
}

/* The candidate lines of ``count`` match ends (sorted here), one at a time, as the line-by-line loop of
 * diag.scan.engines.lines_of_ends gives them. Every hit is inside [0, n] and names an expression of
 * ``members`` (the callers check). lines_from_hits makes the list Hs.lines returns of them; Hs.digest
 * digests them as they come, without a (start, stop, members) tuple per line (session 17). */
typedef struct {
    const unsigned char *s;
    Py_ssize_t n, count, i;
    Hit *hits;
    Py_ssize_t *ids;
    Py_ssize_t last_ids[MAX_LAST_IDS], last_k;
    PyObject *last_union, *members, *unions;
} HitLines;

/* 0, or -1 with an exception (then hit_lines_release still must be called). */
static int hit_lines_init(HitLines *it, const unsigned char *s, Py_ssize_t n, Hit *hits, Py_ssize_t count,
                          PyObject *members, PyObject *unions) {
    it->s = s, it->n = n, it->hits = hits, it->count = count, it->i = 0, it->last_k = 0;
    it->last_union = NULL, it->members = members, it->unions = unions;
    it->ids = PyMem_Malloc(sizeof(Py_ssize_t) * (count ? count : 1));
    if (!it->ids) {
        PyErr_NoMemory();
        return -1;
    }
    /* Hyperscan reports in end order almost always: sort only when it did not (qsort may not be
     * given the NULL buffer of an empty collector). Ties are put in expression order too: an empty line
     * can be reported twice (a match ending before it, one ending on its terminator), and each report
     * must carry the members Python's loop gives it. */
    int sorted = 1;
    for (Py_ssize_t i = 1; i < count && sorted; i++) /* in (end, expr) order, as Python's sorted() of the pairs */
        sorted = hits[i - 1].end < hits[i].end || (hits[i - 1].end == hits[i].end && hits[i - 1].expr <= hits[i].expr);
    if (count > 1 && !sorted)
        qsort(hits, count, sizeof(Hit), hit_cmp);
    return 0;
}

static void hit_lines_release(HitLines *it) {
    Py_CLEAR(it->last_union);
    PyMem_Free(it->ids);
    it->ids = NULL;
}

/* The next line: 1 with *start, *stop and *tried (a new reference to its member set), 0 after the last
 * one, -1 with an exception. */
static int hit_lines_next(HitLines *it, Py_ssize_t *start, Py_ssize_t *stop, PyObject **tried) {
    Hit *hits = it->hits;
    Py_ssize_t *ids = it->ids, i = it->i, count = it->count;
    if (i >= count)
        return 0;
    /* A match ending at or before the current line's terminator is on that line, any other
     * starts the line holding its last byte. */
    Py_ssize_t pos = hits[i].end - 1 > 0 ? hits[i].end - 1 : 0, k = 0;
    line_span(it->s, it->n, pos, start, stop);
    do {
        Py_ssize_t e = hits[i].expr, j;
        int seen = 0;
        for (j = 0; j < k; j++)
            if (ids[j] == e) {
                seen = 1;
                break;
            }
        if (!seen) { /* keep ids sorted: the key of the shared union */
            j = k++;
            while (j > 0 && ids[j - 1] > e) {
                ids[j] = ids[j - 1];
                j--;
            }
            ids[j] = e;
        }
        i++;
    } while (i < count && hits[i].end <= *stop);
    it->i = i;
    if (k > 1 && k == it->last_k && it->last_union && memcmp(ids, it->last_ids, sizeof(Py_ssize_t) * k) == 0) {
        *tried = it->last_union; /* NCCL's lines come in runs of one kind: the union of the line before */
        Py_INCREF(*tried);
        return 1;
    }
    *tried = members_union(it->members, it->unions, ids, k);
    if (!*tried)
        return -1;
    if (k > 1 && k <= MAX_LAST_IDS) {
        memcpy(it->last_ids, ids, sizeof(Py_ssize_t) * k);
        it->last_k = k;
        Py_INCREF(*tried);
        Py_XSETREF(it->last_union, *tried);
    }
    return 1;
}

/* The candidate lines of ``count`` match ends: [(start, stop, members)]. */
static PyObject *lines_from_hits(const unsigned char *s, Py_ssize_t n, Hit *hits, Py_ssize_t count, PyObject *members,
                                 PyObject *unions) {
    HitLines it;
    PyObject *out = NULL;
    if (hit_lines_init(&it, s, n, hits, count, members, unions) < 0 || !(out = PyList_New(0)))
        goto done;
    for (;;) {
        Py_ssize_t start, stop;
        PyObject *tried;
        int r = hit_lines_next(&it, &start, &stop, &tried);
        if (r <= 0) {
            if (r < 0)
                Py_CLEAR(out);
            break;
        }
        PyObject *item = PyTuple_New(3), *a = PyLong_FromSsize_t(start), *b = PyLong_FromSsize_t(stop);
        if (item && a && b) {
            PyTuple_SET_ITEM(item, 0, a);
            PyTuple_SET_ITEM(item, 1, b);
            PyTuple_SET_ITEM(item, 2, tried);
        } else {
            Py_XDECREF(a);
            Py_XDECREF(b);
            Py_DECREF(tried);
            Py_CLEAR(item);
        }
        if (!item || PyList_Append(out, item) < 0) {
            Py_XDECREF(item);
            Py_CLEAR(out);
            break;
        }
        Py_DECREF(item);
    }
done:
    hit_lines_release(&it);
    return out;
}

/* lines(block, ends, exprs, members, unions): the same from Python lists of ends and expressions. */
static PyObject *core_lines(PyObject *self, PyObject *args) {
    Py_buffer buf;
    PyObject *ends, *exprs, *members, *unions, *out = NULL;
    if (!PyArg_ParseTuple(args, "y*O!O!O!O!", &buf, &PyList_Type, &ends, &PyList_Type, &exprs, &PyList_Type,
                          &members, &PyDict_Type, &unions))
        return NULL;
    Py_ssize_t n = buf.len, count = PyList_GET_SIZE(ends), nmembers = PyList_GET_SIZE(members);
    Hit *hits = NULL;
    if (PyList_GET_SIZE(exprs) != count) {
        PyErr_SetString(PyExc_ValueError, "ends and exprs differ in length");
        goto done;
    }
    hits = PyMem_Malloc(sizeof(Hit) * (count ? count : 1));
    if (!hits) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t end = PyLong_AsSsize_t(PyList_GET_ITEM(ends, i));
        Py_ssize_t expr = PyLong_AsSsize_t(PyList_GET_ITEM(exprs, i));
        if ((end == -1 || expr == -1) && PyErr_Occurred())
            goto done;
        if (end < 0 || end > n || expr < 0 || expr >= nmembers) {
            PyErr_SetString(PyExc_ValueError, "match outside the block or unknown expression");
            goto done;
        }
        hits[i].end = end;
        hits[i].expr = expr;
    }
    out = lines_from_hits(buf.buf, n, hits, count, members, unions);
done:
    PyMem_Free(hits);
    PyBuffer_Release(&buf);
    return out;
}

/* --- Hyperscan's callback ------------------------------------------------------------------- */

/* A match_event_handler for hyperscan.Database.scan that only records (end, expression) in C:
 * a Python function per match cost more than the scan. ``collector.lines(block, members, unions)``
 * then gives core.lines's result and empties it. */
typedef struct {
    PyObject_HEAD Hit *hits;
    Py_ssize_t count, cap;
} Collector;

static void collector_dealloc(Collector *c) {
    PyMem_Free(c->hits);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

static PyObject *collector_call(Collector *c, PyObject *args, PyObject *kwargs) {
    /* (id, from, to, flags, context) */
    if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) < 3) {
        PyErr_SetString(PyExc_TypeError, "expected (id, from, to, ...)");
        return NULL;
    }
    Py_ssize_t expr = PyLong_AsSsize_t(PyTuple_GET_ITEM(args, 0));
    Py_ssize_t end = PyLong_AsSsize_t(PyTuple_GET_ITEM(args, 2));
    if ((expr == -1 || end == -1) && PyErr_Occurred())
        return NULL;
    if (c->count == c->cap) {
        Py_ssize_t cap = c->cap ? c->cap * 2 : 1024;
        Hit *grown = PyMem_Realloc(c->hits, sizeof(Hit) * cap);
        if (!grown)
            return PyErr_NoMemory();
        c->hits = grown;
        c->cap = cap;
    }
    c->hits[c->count].end = end;
    c->hits[c->count].expr = expr;
    c->count++;
    Py_RETURN_NONE;
}

static PyObject *collector_lines(Collector *c, PyObject *args) {
    Py_buffer buf;
    PyObject *members, *unions, *out = NULL;
    if (!PyArg_ParseTuple(args, "y*O!O!", &buf, &PyList_Type, &members, &PyDict_Type, &unions))
        return NULL;
    Py_ssize_t nmembers = PyList_GET_SIZE(members);
    for (Py_ssize_t i = 0; i < c->count; i++)
        if (c->hits[i].end < 0 || c->hits[i].end > buf.len || c->hits[i].expr < 0 || c->hits[i].expr >= nmembers) {
            PyErr_SetString(PyExc_ValueError, "match outside the block or unknown expression");
            goto done;
        }
    out = lines_from_hits(buf.buf, buf.len, c->hits, c->count, members, unions);
done:
    c->count = 0;
    if (c->cap > (1 << 20)) { /* a block with very many matches: do not keep its buffer */
        PyMem_Free(c->hits);
        c->hits = NULL;
        c->cap = 0;
    }
    PyBuffer_Release(&buf);
    return out;
}

static PyObject *collector_clear(Collector *c, PyObject *unused) {
    c->count = 0;
    Py_RETURN_NONE;
}

static PyMethodDef collector_methods[] = {
    {"lines", (PyCFunction)collector_lines, METH_VARARGS, "lines(block, members, unions): the recorded matches' lines."},
    {"clear", (PyCFunction)collector_clear, METH_NOARGS, "Forget the recorded matches."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject CollectorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "diag.scan._core.Collector",
    .tp_basicsize = sizeof(Collector),
    .tp_dealloc = (destructor)collector_dealloc,
    .tp_call = (ternaryfunc)collector_call,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_methods = collector_methods,
    .tp_new = PyType_GenericNew,
    .tp_doc = "Records Hyperscan matches for lines().",
};

/* --- Hyperscan run from C (built when setup.py finds libhs: Debian's libhyperscan-dev) ---------- */

#ifdef SLURMDIAG_HS
#include <hs.h>

/* A Hyperscan database with its scratch space and a buffer of the last scan's matches:
 * Hs.lines(block, members, unions) scans ``block`` and gives core.lines's result, with no Python
 * call per match (the hyperscan package's binding builds an argument tuple per match under the
 * interpreter lock: on an NCCL-dense log that cost three times the scan itself). Each process
 * has its own copy after a fork, scratch included, and scans one block at a time. */
typedef struct {
    PyObject_HEAD hs_database_t *db;
    hs_scratch_t *scratch;
    Hit *hits;
    Py_ssize_t count, cap;
    int out_of_memory, busy; /* busy: its hits are being digested (Hs.digest may call Python) */
    unsigned int nexprs;
} Hs;

static PyObject *digest_lines(Py_buffer *buf, PyObject *lines, HitLines *it, PyObject *capsule, PyObject *scanner,
                              PyObject *folder, PyObject *slow);

static PyTypeObject HsType;

static void hs_dealloc(Hs *h) {
    if (h->scratch)
        hs_free_scratch(h->scratch);
    if (h->db)
        hs_free_database(h->db);
    free(h->hits);
    Py_TYPE(h)->tp_free((PyObject *)h);
}

/* An Hs around ``db`` (taken over), with its scratch; NULL with an exception on failure. */
static PyObject *hs_wrap(hs_database_t *db, unsigned int nexprs) {
    Hs *h = PyObject_New(Hs, &HsType);
    if (!h) {
        hs_free_database(db);
        return NULL;
    }
    h->db = db;
    h->scratch = NULL;
    h->hits = NULL;
    h->count = h->cap = 0;
    h->out_of_memory = h->busy = 0;
    h->nexprs = nexprs;
    if (hs_alloc_scratch(db, &h->scratch) != HS_SUCCESS) {
        Py_DECREF(h);
        return PyErr_Format(PyExc_ValueError, "Hyperscan cannot allocate scratch space for the database");
    }
    return (PyObject *)h;
}

/* hs_compile(exprs) -> Hs: the expressions (bytes, Hyperscan syntax) in one block-mode database,
 * expression i reported as id i, every one with HS_FLAG_ALLOWEMPTY (as the Python engine compiles
 * them). ValueError with Hyperscan's message when one does not compile. */
static PyObject *core_hs_compile(PyObject *self, PyObject *args) {
    PyObject *exprs;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &exprs))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(exprs);
    if (n == 0 || n > 1000000) {
        PyErr_SetString(PyExc_ValueError, "Hyperscan needs 1 to 10^6 expressions");
        return NULL;
    }
    const char **patterns = PyMem_Malloc(sizeof(char *) * n);
    unsigned int *flags = PyMem_Malloc(sizeof(unsigned int) * n), *ids = PyMem_Malloc(sizeof(unsigned int) * n);
    PyObject *out = NULL;
    if (!patterns || !flags || !ids) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *e = PyList_GET_ITEM(exprs, i);
        if (!PyBytes_Check(e) || (Py_ssize_t)strlen(PyBytes_AS_STRING(e)) != PyBytes_GET_SIZE(e)) {
            PyErr_SetString(PyExc_TypeError, "an expression is bytes without NUL");
            goto done;
        }
        patterns[i] = PyBytes_AS_STRING(e);
        flags[i] = HS_FLAG_ALLOWEMPTY;
        ids[i] = (unsigned int)i;
    }
    hs_database_t *db = NULL;
    hs_compile_error_t *err = NULL;
    if (hs_compile_multi(patterns, flags, ids, (unsigned int)n, HS_MODE_BLOCK, NULL, &db, &err) != HS_SUCCESS) {
        PyErr_Format(PyExc_ValueError, "Hyperscan cannot compile expression %d: %s", err ? err->expression : -1,
                     err && err->message ? err->message : "?");
        hs_free_compile_error(err);
        goto done;
    }
    out = hs_wrap(db, (unsigned int)n);
done:
    PyMem_Free(patterns);
    PyMem_Free(flags);
    PyMem_Free(ids);
    return out;
}

/* hs_load(serialized, expressions) -> Hs: a database Hs.serialize() wrote (by this libhs version:
 * the cache key holds hs_version()). ValueError when libhs refuses it. */
static PyObject *core_hs_load(PyObject *self, PyObject *args) {
    Py_buffer buf;
    unsigned int nexprs;
    if (!PyArg_ParseTuple(args, "y*I", &buf, &nexprs))
        return NULL;
    hs_database_t *db = NULL;
    hs_error_t rc = hs_deserialize_database(buf.buf, buf.len, &db);
    PyBuffer_Release(&buf);
    if (rc != HS_SUCCESS)
        return PyErr_Format(PyExc_ValueError, "Hyperscan cannot load the database (error %d)", rc);
    return hs_wrap(db, nexprs);
}

static PyObject *hs_serialize(Hs *h, PyObject *unused) {
    char *bytes = NULL;
    size_t size = 0;
    if (hs_serialize_database(h->db, &bytes, &size) != HS_SUCCESS)
        return PyErr_Format(PyExc_ValueError, "Hyperscan cannot serialize the database");
    PyObject *out = PyBytes_FromStringAndSize(bytes, size);
    free(bytes);
    return out;
}

static int hs_on_match(unsigned int id, unsigned long long from, unsigned long long to, unsigned int flags,
                       void *ctx) {
    Hs *h = ctx;
    if (h->count == h->cap) {
        Py_ssize_t cap = h->cap ? h->cap * 2 : 4096;
        Hit *grown = realloc(h->hits, sizeof(Hit) * cap);
        if (!grown) {
            h->out_of_memory = 1;
            return 1; /* stop the scan */
        }
        h->hits = grown;
        h->cap = cap;
    }
    h->hits[h->count].end = (Py_ssize_t)to;
    h->hits[h->count].expr = (Py_ssize_t)id;
    h->count++;
    return 0;
}

/* Scan ``buf`` into h->hits, checked: 0, or -1 with an exception. */
static int hs_scan_block(Hs *h, Py_buffer *buf, PyObject *members) {
    if (h->busy) {
        PyErr_SetString(PyExc_RuntimeError, "the Hyperscan database is digesting another block");
        return -1;
    }
    if (PyList_GET_SIZE(members) != (Py_ssize_t)h->nexprs) {
        PyErr_SetString(PyExc_ValueError, "one member set per expression of the database");
        return -1;
    }
    if (buf->len > (Py_ssize_t)UINT_MAX) {
        PyErr_SetString(PyExc_ValueError, "a block longer than Hyperscan scans at once");
        return -1;
    }
    h->count = 0;
    h->out_of_memory = 0;
    hs_error_t rc = hs_scan(h->db, buf->buf, (unsigned int)buf->len, 0, h->scratch, hs_on_match, h);
    if (h->out_of_memory) {
        PyErr_NoMemory();
        return -1;
    }
    if (rc != HS_SUCCESS) {
        PyErr_Format(PyExc_RuntimeError, "Hyperscan scan failed (error %d)", rc);
        return -1;
    }
    for (Py_ssize_t i = 0; i < h->count; i++) /* libhs's own promise, checked all the same */
        if (h->hits[i].end < 0 || h->hits[i].end > buf->len || h->hits[i].expr >= (Py_ssize_t)h->nexprs) {
            PyErr_SetString(PyExc_RuntimeError, "Hyperscan reported a match outside the block");
            return -1;
        }
    return 0;
}

/* After a block: a block with very many matches does not keep its buffer. */
static void hs_done(Hs *h) {
    h->count = 0;
    if (h->cap > (1 << 20)) {
        free(h->hits);
        h->hits = NULL;
        h->cap = 0;
    }
}

static PyObject *hs_lines(Hs *h, PyObject *args) {
    Py_buffer buf;
    PyObject *members, *unions, *out = NULL;
    if (!PyArg_ParseTuple(args, "y*O!O!", &buf, &PyList_Type, &members, &PyDict_Type, &unions))
        return NULL;
    if (hs_scan_block(h, &buf, members) == 0)
        out = lines_from_hits(buf.buf, buf.len, h->hits, h->count, members, unions);
    if (!h->busy)
        hs_done(h);
    PyBuffer_Release(&buf);
    return out;
}

/* digest(block, members, unions, frame, scanner, folder, slow): core.digest of the lines this scan of
 * ``block`` finds (the lines Hs.lines gives), digested as they are found. */
static PyObject *hs_digest(Hs *h, PyObject *args) {
    Py_buffer buf;
    PyObject *members, *unions, *capsule, *scanner, *folder, *slow, *out = NULL;
    if (!PyArg_ParseTuple(args, "y*O!O!OOOO", &buf, &PyList_Type, &members, &PyDict_Type, &unions, &capsule, &scanner,
                          &folder, &slow))
        return NULL;
    if (hs_scan_block(h, &buf, members) == 0) {
        HitLines it;
        h->busy = 1;
        if (hit_lines_init(&it, buf.buf, buf.len, h->hits, h->count, members, unions) == 0)
            out = digest_lines(&buf, NULL, &it, capsule, scanner, folder, slow);
        hit_lines_release(&it);
        h->busy = 0;
        hs_done(h);
    }
    PyBuffer_Release(&buf);
    return out;
}

static PyMethodDef hs_methods[] = {
    {"lines", (PyCFunction)hs_lines, METH_VARARGS, "lines(block, members, unions): candidate lines of a scan."},
    {"digest", (PyCFunction)hs_digest, METH_VARARGS,
     "digest(block, members, unions, frame, scanner, folder, slow): core.digest of the lines a scan finds."},
    {"serialize", (PyCFunction)hs_serialize, METH_NOARGS, "The database as bytes, for hs_load."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject HsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "diag.scan._core.Hs",
    .tp_basicsize = sizeof(Hs),
    .tp_dealloc = (destructor)hs_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_methods = hs_methods,
    .tp_doc = "A Hyperscan database scanned from C (hs_compile, hs_load).",
};

static PyObject *core_hs_version(PyObject *self, PyObject *unused) { return PyUnicode_FromString(hs_version()); }
#endif /* SLURMDIAG_HS */

/* --- framing -------------------------------------------------------------------------------- */

typedef struct {
    pcre2_code *code;
    pcre2_match_data *md;
    int jit, anchored;
    int fast; /* the common NCCL prefix pattern, which frame_fast reads without PCRE2 */
} Regex;

/* diag.input.framing.COMMON_NCCL_BYTES, the pattern frame_fast is written for: a frame pattern compiled
 * from other text is always run by PCRE2 (tests/scan/test_core.py checks that this one is the current one). */
static const char FAST_FRAME_PATTERN[] =
    "(?: *(?P<task>\\d{1,18}): )?(?:\\[rank(?P<rank>\\d{1,18})\\]: ?|\\[(?!rank\\d+\\])[A-Za-z_][A-Za-z_]*?"
    "(?P<local>\\d{1,18})\\]:)?(?:\\[(?P<ts>\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d)\\] )?"
    "(?P<host>[^\\s\\x1c-\\x1f:\\[\\]`*>]+):(?P<pid>\\d{1,18}):(?P<tid>\\d{1,18}) "
    "(?:\\[(?P<dev>\\d{1,18})\\] )?(?:\\d+(?:\\.\\d+)? )?"
    "(?:(?P<src>[^\\s\\x1c-\\x1f]+:(?:\\d+|[Xx]+)) (?:\\([^)\\s\\x1c-\\x1f]*\\) )?)?"
    "(?:NCCL )?(?P<level>INFO|WARN|TRACE|CALL|ERROR) ?";

static void regex_free(PyObject *capsule) {
    Regex *r = PyCapsule_GetPointer(capsule, "slurmdiag.regex");
    if (r) {
        pcre2_match_data_free(r->md);
        pcre2_code_free(r->code);
        PyMem_Free(r);
    }
}

/* compile(pattern, anchored) -> capsule: a PCRE2 pattern (bytes, no UTF), JIT-compiled where the
 * platform has a JIT; ``anchored`` matches at the subject's start only, as re.match does. */
static PyObject *core_compile(PyObject *self, PyObject *args) {
    const char *pattern;
    Py_ssize_t size;
    int anchored;
    if (!PyArg_ParseTuple(args, "y#p", &pattern, &size, &anchored))
        return NULL;
    int err;
    PCRE2_SIZE where;
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)pattern, size, anchored ? PCRE2_ANCHORED : 0, &err, &where, NULL);
    if (!code) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(err, msg, sizeof msg);
        PyErr_Format(PyExc_ValueError, "PCRE2 cannot compile the pattern at %zu: %s", (size_t)where, msg);
        return NULL;
    }
    Regex *r = PyMem_Malloc(sizeof(Regex));
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(code, NULL);
    if (!r || !md) {
        PyMem_Free(r);
        pcre2_match_data_free(md);
        pcre2_code_free(code);
        return PyErr_NoMemory();
    }
    r->code = code;
    r->md = md;
    r->anchored = anchored;
    r->fast = anchored && (size_t)size == sizeof FAST_FRAME_PATTERN - 1 && memcmp(pattern, FAST_FRAME_PATTERN, size) == 0;
    r->jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
    PyObject *capsule = PyCapsule_New(r, "slurmdiag.regex", regex_free);
    if (!capsule) {
        pcre2_match_data_free(md);
        pcre2_code_free(code);
        PyMem_Free(r);
    }
    return capsule;
}

/* Group g's span in ov (start, end); unset when it did not take part. */
#define G_START(ov, g) ((ov)[2 * (g)])
#define G_END(ov, g) ((ov)[2 * (g) + 1])
#define G_SET(ov, g) ((ov)[2 * (g)] != PCRE2_UNSET)

/* The match count (1 + the highest group set) or a negative PCRE2 error (PCRE2_ERROR_NOMATCH). */
static int regex_run(Regex *r, const unsigned char *s, Py_ssize_t n) {
    if (r->jit)
        return pcre2_jit_match(r->code, s, n, 0, 0, r->md, NULL);
    return pcre2_match(r->code, s, n, 0, r->anchored ? PCRE2_ANCHORED : 0, r->md, NULL);
}

static Regex *regex_of(PyObject *capsule) { return PyCapsule_GetPointer(capsule, "slurmdiag.regex"); }

/* --- the common NCCL prefix without PCRE2 ------------------------------------------------------ */

#define FRAME_GROUPS 10 /* task, rank, local, ts, host, pid, tid, dev, src, level */

static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static int is_letter(unsigned char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }

/* The length of the run of digits at s[p..n), when it is 1 to 18 long and followed by ``next``; else 0. */
static Py_ssize_t digits_then(const unsigned char *s, Py_ssize_t n, Py_ssize_t p, unsigned char next) {
    Py_ssize_t q = p;
    while (q < n && is_digit(s[q]))
        q++;
    return q > p && q - p <= 18 && q < n && s[q] == next ? q - p : 0;
}

/* The bytes frame_fast reads in a host name: printable ASCII that the pattern's host class takes. */
static unsigned char host_char[256];

static void set_group(PCRE2_SIZE *ov, int g, Py_ssize_t a, Py_ssize_t b) {
    ov[2 * g] = (PCRE2_SIZE)a;
    ov[2 * g + 1] = (PCRE2_SIZE)b;
}

/* The anchored match of FAST_FRAME_PATTERN on an ASCII line, for the lines NCCL prints by the million
 * ("[label]:host:pid:tid [dev] NCCL INFO ..." behind an optional srun label or torchrun rank, with an
 * optional timestamp), in PCRE2's ovector form: 11 (1 + the last group set) with ``ov`` filled, or 0
 * when the line is not one it reads, for PCRE2 to match. It follows the pattern's first choice at every
 * point, and each optional group here matches in at most one way, so a line it reads to the end is
 * matched by the backtracking engine on the same path (its first path that succeeds); wherever that path
 * would fail and the engine backtrack (a group taken that leaves the rest unmatched), it returns 0.
 * Hosts are read only of printable characters, so what \\s means to either engine never matters. */
static int frame_fast(const unsigned char *s, Py_ssize_t n, PCRE2_SIZE *ov) {
    if (!host_char['a'])
        for (int c = '!'; c < 0x7f; c++)
            host_char[c] = !strchr(":[]`*>", c);
    for (int g = 0; g <= FRAME_GROUPS; g++)
        set_group(ov, g, PCRE2_UNSET, PCRE2_UNSET);
    Py_ssize_t p = 0, d;
    /* (?: *(?P<task>\d{1,18}): )? */
    {
        Py_ssize_t q = 0;
        while (q < n && s[q] == ' ')
            q++;
        if ((d = digits_then(s, n, q, ':')) && q + d + 1 < n && s[q + d + 1] == ' ') {
            set_group(ov, 1, q, q + d);
            p = q + d + 2;
        }
    }
    /* (?:\[rank(?P<rank>\d{1,18})\]: ?|\[(?!rank\d+\])[A-Za-z_][A-Za-z_]*?(?P<local>\d{1,18})\]:)? */
    if (p < n && s[p] == '[') {
        int rank_word = n - p >= 5 && memcmp(s + p + 1, "rank", 4) == 0;
        if (rank_word && (d = digits_then(s, n, p + 5, ']')) && p + 5 + d + 1 < n && s[p + 5 + d + 1] == ':') {
            set_group(ov, 2, p + 5, p + 5 + d);
            p += 5 + d + 2;
            if (p < n && s[p] == ' ')
                p++;
        } else if (rank_word && p + 5 < n && is_digit(s[p + 5])) {
            return 0; /* "[rank" and digits that alt 1 does not take: the lookahead decides */
        } else {
            Py_ssize_t q = p + 1;
            while (q < n && is_letter(s[q]))
                q++;
            if (q > p + 1 && (d = digits_then(s, n, q, ']')) && q + d + 1 < n && s[q + d + 1] == ':') {
                set_group(ov, 3, q, q + d);
                p = q + d + 2;
            }
        }
    }
    /* (?:\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\] )? */
    if (n - p >= 22 && s[p] == '[' && s[p + 20] == ']' && s[p + 21] == ' ') {
        static const char form[] = "dddd-dd-dd dd:dd:dd";
        int ok = 1;
        for (int i = 0; i < 19 && ok; i++)
            ok = form[i] == 'd' ? is_digit(s[p + 1 + i]) : s[p + 1 + i] == (unsigned char)form[i];
        if (ok) {
            set_group(ov, 4, p + 1, p + 20);
            p += 22;
        }
    }
    /* (?P<host>[^\s\x1c-\x1f:\[\]`*>]+):(?P<pid>\d{1,18}):(?P<tid>\d{1,18}) , hosts of printable characters */
    Py_ssize_t h = p;
    while (h < n && host_char[s[h]])
        h++;
    if (h == p || h >= n || s[h] != ':')
        return 0;
    set_group(ov, 5, p, h);
    p = h + 1;
    if (!(d = digits_then(s, n, p, ':')))
        return 0;
    set_group(ov, 6, p, p + d);
    p += d + 1;
    if (!(d = digits_then(s, n, p, ' ')))
        return 0;
    set_group(ov, 7, p, p + d);
    p += d + 1;
    /* (?:\[(?P<dev>\d{1,18})\] )? */
    if (p < n && s[p] == '[' && (d = digits_then(s, n, p + 1, ']')) && p + d + 2 < n && s[p + d + 2] == ' ') {
        set_group(ov, 8, p + 1, p + 1 + d);
        p += d + 3;
    }
    /* "NCCL " and a level: neither the number group nor src (no ':' before the space) can match there */
    if (n - p < 5 || memcmp(s + p, "NCCL ", 5) != 0)
        return 0;
    p += 5;
    Py_ssize_t w = 0; /* INFO|WARN|TRACE|CALL|ERROR: no word begins another */
    if (n - p >= 4 && (memcmp(s + p, "INFO", 4) == 0 || memcmp(s + p, "WARN", 4) == 0 || memcmp(s + p, "CALL", 4) == 0))
        w = 4;
    else if (n - p >= 5 && (memcmp(s + p, "TRACE", 5) == 0 || memcmp(s + p, "ERROR", 5) == 0))
        w = 5;
    else
        return 0;
    set_group(ov, 10, p, p + w);
    p += w;
    if (p < n && s[p] == ' ')
        p++;
    set_group(ov, 0, 0, p);
    return FRAME_GROUPS + 1;
}

/* frame_fast(subject) -> the tuple core.match gives, or None where frame_fast leaves the line to PCRE2. For the tests. */
static PyObject *core_frame_fast(PyObject *self, PyObject *args) {
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "y*", &buf))
        return NULL;
    PCRE2_SIZE ov[2 * (FRAME_GROUPS + 1)];
    int rc = frame_fast(buf.buf, buf.len, ov);
    PyBuffer_Release(&buf);
    if (!rc)
        Py_RETURN_NONE;
    PyObject *out = PyTuple_New(FRAME_GROUPS + 2);
    if (!out)
        return NULL;
    PyTuple_SET_ITEM(out, 0, PyLong_FromSize_t(G_START(ov, 0)));
    PyTuple_SET_ITEM(out, 1, PyLong_FromSize_t(G_END(ov, 0)));
    for (int g = 1; g <= FRAME_GROUPS; g++)
        PyTuple_SET_ITEM(out, g + 1,
                         G_SET(ov, g) ? Py_BuildValue("(nn)", (Py_ssize_t)G_START(ov, g), (Py_ssize_t)G_END(ov, g))
                                      : Py_NewRef(Py_None));
    for (int g = 0; g < FRAME_GROUPS + 2; g++)
        if (!PyTuple_GET_ITEM(out, g)) {
            Py_DECREF(out);
            return NULL;
        }
    return out;
}

/* frame_is_fast(capsule) -> whether digest reads this frame pattern with frame_fast. For the tests. */
static PyObject *core_frame_is_fast(PyObject *self, PyObject *capsule) {
    Regex *r = regex_of(capsule);
    return r ? PyBool_FromLong(r->fast) : NULL;
}

/* match(capsule, subject) -> (start, end, span of group 1, ...) or None; unset groups are None. For the tests. */
static PyObject *core_match(PyObject *self, PyObject *args) {
    PyObject *capsule;
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "Oy*", &capsule, &buf))
        return NULL;
    Regex *r = regex_of(capsule);
    if (!r) {
        PyBuffer_Release(&buf);
        return NULL;
    }
    int rc = regex_run(r, buf.buf, buf.len);
    PyObject *out;
    if (rc < 0) {
        if (rc != PCRE2_ERROR_NOMATCH) {
            PyBuffer_Release(&buf);
            return PyErr_Format(PyExc_RuntimeError, "PCRE2 match error %d", rc);
        }
        Py_INCREF(Py_None);
        out = Py_None;
    } else {
        uint32_t groups = 0;
        pcre2_pattern_info(r->code, PCRE2_INFO_CAPTURECOUNT, &groups);
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(r->md);
        out = PyTuple_New(groups + 2);
        if (out) {
            PyTuple_SET_ITEM(out, 0, PyLong_FromSize_t(G_START(ov, 0)));
            PyTuple_SET_ITEM(out, 1, PyLong_FromSize_t(G_END(ov, 0)));
            for (uint32_t g = 1; g <= groups; g++) {
                PyObject *v;
                if ((int)g < rc && G_SET(ov, g))
                    v = Py_BuildValue("(nn)", (Py_ssize_t)G_START(ov, g), (Py_ssize_t)G_END(ov, g));
                else {
                    Py_INCREF(Py_None);
                    v = Py_None;
                }
                if (!v) {
                    Py_CLEAR(out);
                    break;
                }
                PyTuple_SET_ITEM(out, g + 1, v);
            }
        }
    }
    PyBuffer_Release(&buf);
    return out;
}

/* --- digest --------------------------------------------------------------------------------- */

/* int(digits) of a \d+ group: any length, as Python's int() reads it. */
static PyObject *int_of(const unsigned char *s, Py_ssize_t a, Py_ssize_t b) {
    if (b - a <= 18) {
        long long v = 0;
        for (Py_ssize_t i = a; i < b; i++)
            v = v * 10 + (s[i] - '0');
        return PyLong_FromLongLong(v);
    }
    char *tmp = PyMem_Malloc(b - a + 1);
    if (!tmp)
        return PyErr_NoMemory();
    memcpy(tmp, s + a, b - a);
    tmp[b - a] = 0;
    PyObject *v = PyLong_FromString(tmp, NULL, 10);
    PyMem_Free(tmp);
    return v;
}

static PyObject *group_int(const unsigned char *s, PCRE2_SIZE *ov, int rc, int g) {
    if (g < rc && G_SET(ov, g) && G_END(ov, g) > G_START(ov, g))
        return int_of(s, G_START(ov, g), G_END(ov, g));
    Py_INCREF(Py_None);
    return Py_None;
}

static PyObject *group_str(const unsigned char *s, PCRE2_SIZE *ov, int rc, int g) {
    if (g < rc && G_SET(ov, g) && G_END(ov, g) > G_START(ov, g))
        return PyUnicode_DecodeASCII((const char *)s + G_START(ov, g), G_END(ov, g) - G_START(ov, g), NULL);
    Py_INCREF(Py_None);
    return Py_None;
}

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* No byte >= 0x80 and no escape (0x1b): eight bytes at a time (every candidate line is read whole
 * by this check; the byte loop was a third of core_digest's own samples). */
static int is_plain_ascii(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    uint64_t high = 0, esc = 0; /* 32 bytes a step, one test: most lines pass */
    for (; i + 32 <= n; i += 32) {
        uint64_t v[4];
        memcpy(v, s + i, 32);
        for (int j = 0; j < 4; j++) {
            uint64_t x = v[j] ^ (ONES * 0x1b);
            high |= v[j];
            esc |= (x - ONES) & ~x; /* exact where no byte has its high bit, and those return 0 anyway */
        }
    }
    if ((high | esc) & HIGHS)
        return 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v, x;
        memcpy(&v, s + i, 8); /* unaligned-safe */
        x = v ^ (ONES * 0x1b);  /* a zero byte where v holds 0x1b */
        if ((v & HIGHS) || ((x - ONES) & ~x & HIGHS))
            return 0;
    }
    for (; i < n; i++)
        if (s[i] >= 0x80 || s[i] == 0x1b)
            return 0;
    return 1;
}

typedef struct {
    PyObject *seen, *full, *matches, *counters, *keep; /* the folder's own containers (it clears them in place) */
    PyObject *folder, *shadow, *rank_key, *inherited;  /* for the rank token of a rule match without a rank */
    PyObject *host_key, *shipped;                      /* for keep_in_c: last-wins writes, samples shipped */
    PyObject *folded;
    PyObject *assumed; /* Folder._assumed: the folds made taking a process's rank at the task's start as none */
    Py_ssize_t max_samples, max_seen, max_shadow, max_assumed;
    Py_ssize_t forgot; /* times the folder's memory was (or may have been) forgotten while the core ran */
} Fold;

/* keep_described's token for a rule match on a line without a rank of its own: the rank this task
 * last gave the process, else None when the folder saw the job from its start or assumes (Folder.assume:
 * *assumed is set then), else (INHERITED, pid). New reference, NULL on error. */
static PyObject *rank_token(Fold *fold, PyObject *host, PyObject *pid, int *assumed) {
    PyObject *key = PyTuple_Pack(3, fold->rank_key, host, pid);
    if (!key)
        return NULL;
    PyObject *token = PyDict_GetItemWithError(fold->shadow, key);
    Py_DECREF(key);
    if (token) {
        Py_INCREF(token);
        return token;
    }
    if (PyErr_Occurred())
        return NULL;
    PyObject *known = PyObject_GetAttrString(fold->folder, "_inherited_known");
    if (!known)
        return NULL;
    int yes = PyObject_IsTrue(known);
    Py_DECREF(known);
    if (yes < 0)
        return NULL;
    if (yes)
        Py_RETURN_NONE;
    PyObject *assume = PyObject_GetAttrString(fold->folder, "_assume");
    if (!assume)
        return NULL;
    yes = PyObject_IsTrue(assume);
    Py_DECREF(assume);
    if (yes < 0)
        return NULL;
    if (yes) {
        *assumed = 1;
        Py_RETURN_NONE;
    }
    return PyTuple_Pack(2, fold->inherited, pid);
}

/* A fold made under Folder.assume, listed as keep_described lists it: (host, pid, rule entries). */
static int note_assumed(Fold *fold, PyObject *host, PyObject *pid, PyObject *rule_set) {
    if (PySet_GET_SIZE(fold->assumed) >= fold->max_assumed)
        return 0; /* at the cap the apply digests the task again */
    PyObject *k = PyTuple_Pack(3, host, pid, rule_set);
    if (!k)
        return -1;
    int rc = PySet_Add(fold->assumed, k);
    Py_DECREF(k);
    return rc;
}

/* dict[key] += 1 (starting from 0). */
static int bump(PyObject *dict, PyObject *key) {
    PyObject *old = PyDict_GetItemWithError(dict, key);
    if (!old && PyErr_Occurred())
        return -1;
    PyObject *v = old ? PyNumber_Add(old, one) : PyLong_FromLong(1);
    if (!v)
        return -1;
    int rc = PyDict_SetItem(dict, key, v);
    Py_DECREF(v);
    return rc;
}

/* The part of diag.scan.fold.Folder.keep_described that folds a repeat: 1 when the line was folded
 * here, 0 when Python must decide (a first sighting, a write, an order-dependent fact, a rule whose
 * samples are not full, a rank read from the facts), -1 on error. Only when every condition under
 * which keep_described folds holds is the line counted, exactly as keep_described counts it. */
static int try_fold(Fold *fold, PyObject *host, PyObject *rank, PyObject *pid, PyObject *nccl, PyObject *desc) {
    if (!PyTuple_Check(desc) || PyTuple_GET_SIZE(desc) != 7)
        return 0;
    PyObject *values = PyTuple_GET_ITEM(desc, 0), *rules = PyTuple_GET_ITEM(desc, 1),
             *last_wins = PyTuple_GET_ITEM(desc, 2), *ordered = PyTuple_GET_ITEM(desc, 3),
             *counters = PyTuple_GET_ITEM(desc, 4), *rule_set = PyTuple_GET_ITEM(desc, 5);
    if (values == Py_None || ordered != Py_False || !PyTuple_Check(rules) || !PyTuple_Check(last_wins) ||
        PyTuple_GET_SIZE(last_wins) != 0 || !PyTuple_Check(counters))
        return 0;
    Py_ssize_t nrules = PyTuple_GET_SIZE(rules);
    int assumed = 0;
    PyObject *token = Py_None;
    Py_INCREF(token);
    if (nrules) {
        int sub = PyObject_RichCompareBool(rule_set, fold->full, Py_LE);
        if (sub <= 0) {
            Py_DECREF(token);
            return sub;
        }
        Py_DECREF(token);
        if (rank != Py_None) {
            token = rank;
            Py_INCREF(token);
        } else if (!(token = rank_token(fold, host, pid, &assumed))) {
            return -1;
        }
    }
    PyObject *key = PyTuple_Pack(4, host, nccl, token, values);
    Py_DECREF(token);
    if (!key)
        return -1;
    int in = PySet_Contains(fold->seen, key);
    Py_DECREF(key);
    if (in <= 0)
        return in;
    if (assumed && note_assumed(fold, host, pid, rule_set) < 0)
        return -1;
    for (Py_ssize_t i = 0; i < nrules; i++) {
        PyObject *k = PyTuple_Pack(2, PyTuple_GET_ITEM(rules, i), host);
        if (!k || bump(fold->matches, k) < 0) {
            Py_XDECREF(k);
            return -1;
        }
        Py_DECREF(k);
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(counters); i++) {
        PyObject *k = PyTuple_Pack(2, host, PyTuple_GET_ITEM(counters, i));
        if (!k || bump(fold->counters, k) < 0) {
            Py_XDECREF(k);
            return -1;
        }
        Py_DECREF(k);
    }
    return 1;
}

static PyObject *s_var, *s_value, *s_env, *u_env_echo, *u_hca_echo; /* interned at import */

/* diag.scan.fold.Folder.keep_described in C, for the lines the core meets by the thousand: no
 * last-wins observation, or one ``comm_rank`` (a process's rank in a new communicator: ranks change
 * with every communicator, so these lines ship, and asking Python cost more than the rest of the
 * line), or one setting NCCL echoes (``NCCL_IB_HCA set to ...``: each process prints it, with a rule match).
 * 0: ship the line, 1: folded here, 2: Python must decide (anything else), -1: error. Every
 * step is keep_described's, in its order: the rank token read before the writes, the writes
 * compared with the shadow only for a repeat, the memory forgotten after the writes and before the
 * key is remembered. ``rank_write`` is what facts.overwrites writes: (RANK_OF, host, pid) -> rank
 * and (HOST_OF, rank) -> host; a setting's is ("env", host, var) -> value. */
static int keep_in_c(Fold *fold, PyObject *host, PyObject *rank, PyObject *pid, PyObject *nccl, PyObject *desc) {
    if (!PyTuple_Check(desc) || PyTuple_GET_SIZE(desc) != 7)
        return 2;
    PyObject *values = PyTuple_GET_ITEM(desc, 0), *rules = PyTuple_GET_ITEM(desc, 1),
             *last_wins = PyTuple_GET_ITEM(desc, 2), *ordered = PyTuple_GET_ITEM(desc, 3),
             *counters = PyTuple_GET_ITEM(desc, 4), *rule_set = PyTuple_GET_ITEM(desc, 5),
             *rank_write = PyTuple_GET_ITEM(desc, 6);
    if (values == Py_None || ordered != Py_False || !PyTuple_Check(rules) || !PyTuple_Check(last_wins) ||
        !PyTuple_Check(counters) || !PyUnicode_Check(host) || pid == NULL || pid == Py_None)
        return 2;
    Py_ssize_t nlw = PyTuple_GET_SIZE(last_wins), nrules = PyTuple_GET_SIZE(rules);
    if (nlw > 1 || (nlw == 1 && PyUnicode_GET_LENGTH(host) == 0))
        return 2;
    /* The writes (facts.overwrites): a process's rank and the rank's host, or one host setting that NCCL
     * echoes (env_echo, hca_echo: ("env", host, var) -> value). */
    PyObject *env_var = NULL, *env_value = NULL;
    if (nlw == 1 && !PyLong_Check(rank_write)) {
        PyObject *lw = PyTuple_GET_ITEM(last_wins, 0), *name, *groups;
        if (rank_write != Py_None || !PyTuple_Check(lw) || PyTuple_GET_SIZE(lw) != 2 ||
            !PyUnicode_Check(name = PyTuple_GET_ITEM(lw, 0)) || !PyDict_Check(groups = PyTuple_GET_ITEM(lw, 1)) ||
            (PyUnicode_Compare(name, u_env_echo) != 0 && PyUnicode_Compare(name, u_hca_echo) != 0))
            return 2;
        env_var = PyDict_GetItemWithError(groups, s_var);
        env_value = env_var ? PyDict_GetItemWithError(groups, s_value) : NULL;
        if (!env_value)
            return PyErr_Occurred() ? -1 : 2;
    }
    int nw = env_var ? 1 : (int)nlw * 2;
    int foldable = 1;
    if (nrules && (foldable = PyObject_RichCompareBool(rule_set, fold->full, Py_LE)) < 0)
        return -1;
    PyObject *token;
    int assumed = 0;
    if (!nrules)
        token = Py_None, Py_INCREF(token);
    else if (rank != Py_None)
        token = rank, Py_INCREF(token);
    else if (!(token = rank_token(fold, host, pid, &assumed)))
        return -1;
    PyObject *key = PyTuple_Pack(4, host, nccl, token, values);
    Py_DECREF(token);
    if (!key)
        return -1;
    PyObject *wkeys[2] = {NULL, NULL}, *wvalues[2] = {rank_write, host};
    int rc = -1;
    if (env_var) {
        wvalues[0] = env_value;
        if (!(wkeys[0] = PyTuple_Pack(3, s_env, host, env_var)))
            goto done;
    } else if (nlw && (!(wkeys[0] = PyTuple_Pack(3, fold->rank_key, host, pid)) ||
                       !(wkeys[1] = PyTuple_Pack(2, fold->host_key, rank_write)))) {
        goto done;
    }
    if (foldable) {
        int in = PySet_Contains(fold->seen, key);
        if (in < 0)
            goto done;
        if (in) {
            for (int w = 0; w < nw && foldable; w++) {
                PyObject *old = PyDict_GetItemWithError(fold->shadow, wkeys[w]);
                if (!old) {
                    if (PyErr_Occurred())
                        goto done;
                    foldable = 0;
                } else {
                    int differs = PyObject_RichCompareBool(old, wvalues[w], Py_NE);
                    if (differs < 0)
                        goto done;
                    foldable = !differs;
                }
            }
            if (foldable) {
                if (assumed && note_assumed(fold, host, pid, rule_set) < 0)
                    goto done;
                for (Py_ssize_t i = 0; i < nrules; i++) {
                    PyObject *k = PyTuple_Pack(2, PyTuple_GET_ITEM(rules, i), host);
                    if (!k || bump(fold->matches, k) < 0) {
                        Py_XDECREF(k);
                        goto done;
                    }
                    Py_DECREF(k);
                }
                for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(counters); i++) {
                    PyObject *k = PyTuple_Pack(2, host, PyTuple_GET_ITEM(counters, i));
                    if (!k || bump(fold->counters, k) < 0) {
                        Py_XDECREF(k);
                        goto done;
                    }
                    Py_DECREF(k);
                }
                rc = 1;
                goto done;
            }
        }
    }
    for (Py_ssize_t i = 0; i < nrules; i++) {
        PyObject *entry = PyTuple_GET_ITEM(rules, i);
        if (bump(fold->shipped, entry) < 0)
            goto done;
        PyObject *n = PyDict_GetItemWithError(fold->shipped, entry);
        if (!n)
            goto done;
        Py_ssize_t count = PyLong_AsSsize_t(n);
        if (count == -1 && PyErr_Occurred())
            goto done;
        if (count >= fold->max_samples && PySet_Add(fold->full, entry) < 0)
            goto done;
    }
    for (int w = 0; w < nw; w++)
        if (PyDict_SetItem(fold->shadow, wkeys[w], wvalues[w]) < 0)
            goto done;
    if (PySet_GET_SIZE(fold->seen) >= fold->max_seen || PyDict_GET_SIZE(fold->shadow) >= fold->max_shadow) {
        fold->forgot++;
        PyObject *r = PyObject_CallMethod(fold->folder, "_forget", NULL);
        if (!r)
            goto done;
        Py_DECREF(r);
    }
    if (PySet_Add(fold->seen, key) < 0)
        goto done;
    if (PyTuple_Check(PyTuple_GET_ITEM(key, 2)) && PyObject_SetAttrString(fold->folder, "_inherited_keys", Py_True) < 0)
        goto done; /* a key with an (INHERITED, pid) token: Folder.carry drops those */
    rc = 0;
done:
    Py_DECREF(key);
    Py_XDECREF(wkeys[0]);
    Py_XDECREF(wkeys[1]);
    return rc;
}

static PyObject *get_attr(PyObject *obj, const char *name) { return PyObject_GetAttrString(obj, name); }

/* An int attribute; -1 with an exception set when it is not one. */
static Py_ssize_t get_ssize(PyObject *obj, const char *name) {
    PyObject *v = PyObject_GetAttrString(obj, name);
    if (!v)
        return -1;
    Py_ssize_t n = PyLong_Check(v) ? PyLong_AsSsize_t(v) : -1;
    if (n == -1 && !PyErr_Occurred())
        PyErr_Format(PyExc_TypeError, "%s is not an int", name);
    Py_DECREF(v);
    return n;
}

#define MAX_MEMBERS 64

static int cmp_ssize(const void *a, const void *b) {
    Py_ssize_t x = *(const Py_ssize_t *)a, y = *(const Py_ssize_t *)b;
    return (x > y) - (x < y);
}

/* What confirm() matched, as bytes that only equal matches give (entry, then each group's length
 * or -1 for None, then its bytes): the key of the core's own answers (Answers). */
#define SER_MAX 1024
typedef struct {
    unsigned char buf[SER_MAX];
    Py_ssize_t len;
    int overflow;
} Ser;

static void ser_put(Ser *ser, const void *data, Py_ssize_t n) {
    if (ser->overflow || ser->len + n > SER_MAX) {
        ser->overflow = 1;
        return;
    }
    memcpy(ser->buf + ser->len, data, n);
    ser->len += n;
}

/* The sorted entries of a member set, kept for the next line (lines of one kind share one set). */
typedef struct {
    PyObject *members; /* a reference, so that its address is not reused while cached */
    Py_ssize_t ids[MAX_MEMBERS], k;
    int ok; /* 0: some member is out of range or the set is too large: Python confirms */
} MemberIds;

static int member_ids(MemberIds *mi, PyObject *members, Py_ssize_t nconf) {
    if (mi->members == members)
        return 0;
    Py_XSETREF(mi->members, members);
    Py_INCREF(members);
    mi->k = 0;
    mi->ok = 0;
    if (!PyAnySet_Check(members) || PySet_GET_SIZE(members) > MAX_MEMBERS)
        return 0;
    PyObject *item, *it = PyObject_GetIter(members);
    if (!it)
        return -1;
    while ((item = PyIter_Next(it)) != NULL) {
        Py_ssize_t i = PyLong_AsSsize_t(item);
        Py_DECREF(item);
        if (i < 0 || i >= nconf || mi->k >= MAX_MEMBERS) {
            PyErr_Clear();
            Py_DECREF(it);
            mi->k = 0;
            return 0;
        }
        mi->ids[mi->k++] = i;
    }
    Py_DECREF(it);
    if (PyErr_Occurred())
        return -1;
    qsort(mi->ids, mi->k, sizeof(Py_ssize_t), cmp_ssize);
    mi->ok = 1;
    return 0;
}

/* Scanner._confirm in C for a payload the PCRE2 forms of its candidate signatures can all answer:
 * the tuple ((entry, (value of each named group as bytes, or None), ...), ...) of the signatures
 * among the members (in entry order) that match, which the scanner maps to what confirming gives.
 * NULL without an error when some signature has no PCRE2 form (diag.scan.core.pcre2_form) or PCRE2
 * gave up: Python confirms that payload. ``confirmers[i]``: None or (regex, levels, group numbers).
 * With ``ser``, the same matches are also written as bytes; with ``build`` 0 only those, and the
 * result is None. */
static PyObject *confirm(PyObject *confirmers, MemberIds *mi, const unsigned char *payload, Py_ssize_t plen,
                         const unsigned char *level, Py_ssize_t level_len, Ser *ser, int build) {
    if (!mi->ok)
        return NULL;
    const Py_ssize_t *ids = mi->ids, k = mi->k;
    PyObject *found = build ? PyList_New(0) : NULL;
    if (build && !found)
        return NULL;
    for (Py_ssize_t j = 0; j < k; j++) {
        PyObject *entry = PyList_GET_ITEM(confirmers, ids[j]);
        if (entry == Py_None || !PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 3)
            goto fallback;
        PyObject *levels = PyTuple_GET_ITEM(entry, 1), *groups = PyTuple_GET_ITEM(entry, 2);
        if (!PyTuple_Check(levels) || !PyTuple_Check(groups))
            goto fallback;
        if (PyTuple_GET_SIZE(levels)) { /* Signature.match: a signature of some levels only */
            int ok = 0;
            for (Py_ssize_t q = 0; q < PyTuple_GET_SIZE(levels); q++) {
                PyObject *lv = PyTuple_GET_ITEM(levels, q);
                if (PyBytes_Check(lv) && PyBytes_GET_SIZE(lv) == level_len &&
                    memcmp(PyBytes_AS_STRING(lv), level, level_len) == 0)
                    ok = 1;
            }
            if (!ok)
                continue;
        }
        Regex *r = regex_of(PyTuple_GET_ITEM(entry, 0));
        if (!r) {
            PyErr_Clear();
            goto fallback;
        }
        int rc = regex_run(r, payload, plen);
        if (rc == PCRE2_ERROR_NOMATCH)
            continue;
        if (rc < 0)
            goto fallback; /* a limit or an error: Python decides */
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(r->md);
        uint32_t pairs = pcre2_get_ovector_count(r->md);
        Py_ssize_t ng = PyTuple_GET_SIZE(groups);
        PyObject *values = build ? PyTuple_New(ng) : NULL;
        if (build && !values)
            goto error;
        if (ser) {
            ser_put(ser, &ids[j], sizeof(Py_ssize_t));
            ser_put(ser, &ng, sizeof(Py_ssize_t));
        }
        for (Py_ssize_t q = 0; q < ng; q++) {
            long g = PyLong_AsLong(PyTuple_GET_ITEM(groups, q));
            int set = g > 0 && g < rc && (uint32_t)g < pairs && G_SET(ov, g) && G_END(ov, g) <= (PCRE2_SIZE)plen &&
                      G_START(ov, g) <= G_END(ov, g);
            if (!set && g == -1 && PyErr_Occurred()) {
                Py_XDECREF(values);
                goto error;
            }
            Py_ssize_t at = set ? (Py_ssize_t)G_START(ov, g) : 0, len = set ? (Py_ssize_t)(G_END(ov, g) - G_START(ov, g)) : -1;
            if (ser) {
                ser_put(ser, &len, sizeof(Py_ssize_t));
                if (set)
                    ser_put(ser, payload + at, len);
            }
            if (!build)
                continue;
            PyObject *v;
            if (set)
                v = PyBytes_FromStringAndSize((const char *)payload + at, len);
            else {
                Py_INCREF(Py_None);
                v = Py_None;
            }
            if (!v) {
                Py_DECREF(values);
                goto error;
            }
            PyTuple_SET_ITEM(values, q, v);
        }
        if (!build)
            continue;
        PyObject *hit = Py_BuildValue("(nN)", ids[j], values);
        if (!hit || PyList_Append(found, hit) < 0) {
            Py_XDECREF(hit);
            goto error;
        }
        Py_DECREF(hit);
    }
    if (!build)
        Py_RETURN_NONE;
    PyObject *key = PyList_AsTuple(found);
    Py_DECREF(found);
    return key;
fallback:
    Py_XDECREF(found);
    return NULL;
error:
    Py_XDECREF(found);
    return NULL;
}

/* --- answers by matched values, held in C --------------------------------------------------- */

/* Answers(): what the scanner's _by_matches answered, keyed by the bytes confirm() writes, so that
 * a repeat of known matches (NCCL's one-off ``comm 0x...`` lines: a new pointer, the same rank) is
 * answered without building its Python key. Only answers _by_matches gave are kept, and a key maps
 * to one answer whatever payload gave it, so this only skips work. At most ANSWERS_MAX entries: all
 * are forgotten when it fills. Each Scanner has its own (entry numbers are its own). */
#define ANSWERS_SLOTS 8192
#define ANSWERS_MAX 4096
typedef struct {
    uint64_t hash;
    unsigned char *key;
    Py_ssize_t len;
    PyObject *value;
} Answer;

typedef struct {
    PyObject_HEAD Answer *slots;
    Py_ssize_t count;
    /* Used as the memo's key set (Scanner._memo_keys, see keys_sync): the memo dict it mirrors (a
     * reference, so that its address is not reused), how many of its keys were taken in, and whether
     * the set cannot stand for the memo now (then every line asks the memo). */
    PyObject *memo;
    Py_ssize_t tracked;
    int off;
} Answers;

/* A 64-bit hash of the answers' keys, eight bytes at a time (multiply and fold; a key is compared in
 * full on a hit, so a collision costs a probe, never a wrong answer). */
static uint64_t hash_bytes(const unsigned char *s, Py_ssize_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n;
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v;
        memcpy(&v, s + i, 8);
        h = (h ^ v) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    uint64_t tail = 0;
    if (i < n)
        memcpy(&tail, s + i, (size_t)(n - i));
    h = (h ^ tail) * 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 29);
}

static void answers_clear(Answers *a) {
    if (!a->slots)
        return;
    for (Py_ssize_t i = 0; i < ANSWERS_SLOTS; i++)
        if (a->slots[i].key) {
            PyMem_Free(a->slots[i].key);
            Py_CLEAR(a->slots[i].value);
            a->slots[i].key = NULL;
        }
    a->count = 0;
}

static void answers_dealloc(Answers *a) {
    answers_clear(a);
    Py_CLEAR(a->memo);
    PyMem_Free(a->slots);
    Py_TYPE(a)->tp_free((PyObject *)a);
}

static PyObject *answers_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    Answers *a = (Answers *)type->tp_alloc(type, 0);
    if (!a)
        return NULL;
    a->slots = PyMem_Calloc(ANSWERS_SLOTS, sizeof(Answer));
    if (!a->slots) {
        Py_DECREF(a);
        return PyErr_NoMemory();
    }
    return (PyObject *)a;
}

/* The slot of ``key``: its own, or the empty one where it would go. */
static Answer *answers_slot(Answers *a, const unsigned char *key, Py_ssize_t len, uint64_t h) {
    Py_ssize_t i = (Py_ssize_t)(h & (ANSWERS_SLOTS - 1));
    for (;;) {
        Answer *e = &a->slots[i];
        if (!e->key || (e->hash == h && e->len == len && memcmp(e->key, key, len) == 0))
            return e;
        i = (i + 1) & (ANSWERS_SLOTS - 1); /* never full: at most half the slots are used */
    }
}

static PyObject *answers_get(Answers *a, const Ser *ser) { /* borrowed, or NULL */
    if (ser->overflow)
        return NULL;
    Answer *e = answers_slot(a, ser->buf, ser->len, hash_bytes(ser->buf, ser->len));
    return e->key ? e->value : NULL;
}

static int answers_put(Answers *a, const Ser *ser, PyObject *value) { /* a key held keeps its value */
    if (ser->overflow)
        return 0;
    if (a->count >= ANSWERS_MAX)
        answers_clear(a);
    uint64_t h = hash_bytes(ser->buf, ser->len);
    Answer *e = answers_slot(a, ser->buf, ser->len, h);
    if (e->key)
        return 0;
    e->key = PyMem_Malloc(ser->len ? ser->len : 1);
    if (!e->key) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(e->key, ser->buf, ser->len);
    e->len = ser->len;
    e->hash = h;
    Py_INCREF(value);
    e->value = value;
    a->count++;
    return 0;
}

static PyObject *answers_len(Answers *a, PyObject *unused) { return PyLong_FromSsize_t(a->count); }

/* --- the memo's key set ------------------------------------------------------------------------ */

/* The bytes of a memo key (payload, level, members) as the key set holds them: the member set's hash
 * (equal sets hash alike, whatever object holds them), the level and the payload. Keys that differ
 * may share these bytes (sets with one hash): the set then only answers "maybe", never "no" for a
 * key the memo holds. -1 with an exception when the member set cannot be hashed. */
static int memo_key_ser(Ser *ser, PyObject *members, const unsigned char *lvl, Py_ssize_t lvl_len,
                        const unsigned char *payload, Py_ssize_t plen) {
    Py_hash_t mh = PyObject_Hash(members); /* a frozenset keeps its hash */
    if (mh == -1 && PyErr_Occurred())
        return -1;
    unsigned char ll = (unsigned char)(lvl_len > 255 ? 255 : lvl_len);
    ser->len = 0;
    ser->overflow = lvl_len > 255;
    ser_put(ser, &mh, sizeof mh);
    ser_put(ser, &ll, 1);
    ser_put(ser, lvl, lvl_len);
    ser_put(ser, payload, plen);
    return 0;
}

/* Take in one key of the memo: 0, or -1 with an exception. A key not in the shape digest builds, or
 * more keys than the set holds, turn the set off until the memo changes. */
static int keys_take(Answers *k, PyObject *key) {
    if (!PyTuple_Check(key) || PyTuple_GET_SIZE(key) != 3 || !PyBytes_Check(PyTuple_GET_ITEM(key, 0)) ||
        !PyBytes_Check(PyTuple_GET_ITEM(key, 1)) || k->count >= ANSWERS_MAX) {
        k->off = 1;
        return 0;
    }
    PyObject *payload = PyTuple_GET_ITEM(key, 0), *level = PyTuple_GET_ITEM(key, 1);
    Ser ser;
    if (memo_key_ser(&ser, PyTuple_GET_ITEM(key, 2), (const unsigned char *)PyBytes_AS_STRING(level),
                     PyBytes_GET_SIZE(level), (const unsigned char *)PyBytes_AS_STRING(payload),
                     PyBytes_GET_SIZE(payload)) < 0)
        return -1;
    k->tracked++;
    /* a key too long for the bytes is never looked up here (its line asks the memo) */
    return ser.overflow ? 0 : answers_put(k, &ser, Py_None);
}

/* Make the key set stand for ``memo`` (Scanner._bytes_memo, which only _resolve adds to, and which
 * is replaced by a new dict when it turns over), so that a line whose key bytes are not in the set
 * is a memo miss without building its key: after ``added`` was put in (or NULL), the one new key is
 * taken in; any other change (a new generation, a key removed or replaced) takes the memo's keys in
 * afresh. A set that is off answers "maybe" to every line. 0, or -1 with an exception. */
static int keys_sync(Answers *k, PyObject *memo, PyObject *added) {
    if (k->memo == memo && PyDict_GET_SIZE(memo) == k->tracked)
        return 0;
    if (added && k->memo == memo && !k->off && PyDict_GET_SIZE(memo) == k->tracked + 1) {
        PyObject *held = PyDict_GetItemWithError(memo, added);
        if (!held && PyErr_Occurred())
            return -1;
        if (held)
            return keys_take(k, added);
    }
    answers_clear(k);
    Py_INCREF(memo);
    Py_XSETREF(k->memo, memo);
    k->tracked = 0;
    k->off = 0;
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(memo, &pos, &key, &value))
        if (keys_take(k, key) < 0)
            return -1;
    return 0;
}

/* 1 when the memo may hold the key of these bytes, 0 when it does not. */
static int keys_maybe(Answers *k, const Ser *ser) { return k->off || ser->overflow || answers_get(k, ser) != NULL; }

/* may_hold(key) -> bool: whether digest would ask the memo about ``key`` (payload, level, members). For
 * the tests: every key the memo holds must be one. */
static PyObject *keys_may_hold(Answers *k, PyObject *key) {
    if (!PyTuple_Check(key) || PyTuple_GET_SIZE(key) != 3 || !PyBytes_Check(PyTuple_GET_ITEM(key, 0)) ||
        !PyBytes_Check(PyTuple_GET_ITEM(key, 1))) {
        PyErr_SetString(PyExc_TypeError, "a memo key is (payload, level, members)");
        return NULL;
    }
    PyObject *payload = PyTuple_GET_ITEM(key, 0), *level = PyTuple_GET_ITEM(key, 1);
    Ser ser;
    if (memo_key_ser(&ser, PyTuple_GET_ITEM(key, 2), (const unsigned char *)PyBytes_AS_STRING(level),
                     PyBytes_GET_SIZE(level), (const unsigned char *)PyBytes_AS_STRING(payload),
                     PyBytes_GET_SIZE(payload)) < 0)
        return NULL;
    return PyBool_FromLong(keys_maybe(k, &ser));
}

static PyMethodDef answers_methods[] = {
    {"size", (PyCFunction)answers_len, METH_NOARGS, "How many answers are held."},
    {"may_hold", (PyCFunction)keys_may_hold, METH_O, "Whether the memo may hold a key (the memo's key set)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject AnswersType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "diag.scan._core.Answers",
    .tp_basicsize = sizeof(Answers),
    .tp_dealloc = (destructor)answers_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = answers_new,
    .tp_methods = answers_methods,
    .tp_doc = "The core's answers by matched values (see Scanner._by_matches).",
};

/* Fold's references to ``folder``'s containers and settings (the folder clears its containers in
 * place, so they stay its own). 0, or -1 with an exception when the folder is not what the core
 * expects. fold_release drops them (also after a failed fold_init). */
static int fold_init(Fold *fold, PyObject *folder) {
    Py_INCREF(folder);
    fold->folder = folder;
    fold->seen = get_attr(folder, "_seen");
    fold->full = get_attr(folder, "_full");
    fold->folded = get_attr(folder, "folded");
    fold->matches = fold->folded ? get_attr(fold->folded, "matches") : NULL;
    fold->counters = fold->folded ? get_attr(fold->folded, "counters") : NULL;
    fold->keep = get_attr(folder, "keep_described");
    fold->shadow = get_attr(folder, "_shadow");
    fold->rank_key = get_attr(folder, "RANK_KEY");
    fold->host_key = get_attr(folder, "HOST_KEY");
    fold->inherited = get_attr(folder, "INHERITED");
    fold->shipped = get_attr(folder, "_shipped");
    fold->assumed = get_attr(folder, "_assumed");
    fold->max_samples = get_ssize(folder, "max_samples");
    fold->max_seen = get_ssize(folder, "MAX_SEEN");
    fold->max_shadow = get_ssize(folder, "MAX_SHADOW");
    fold->max_assumed = get_ssize(folder, "MAX_ASSUMED");
    if (PyErr_Occurred())
        return -1;
    if (!fold->assumed || !PySet_Check(fold->assumed) || !fold->shadow || !fold->rank_key || !fold->host_key || !fold->inherited || !fold->shipped ||
        !PyDict_Check(fold->shadow) || !PyDict_Check(fold->shipped) || !fold->seen || !fold->full ||
        !fold->matches || !fold->counters || !fold->keep || !PySet_Check(fold->seen) || !PyAnySet_Check(fold->full) ||
        !PyDict_Check(fold->matches) || !PyDict_Check(fold->counters)) {
        PyErr_SetString(PyExc_TypeError, "folder state is not what the core expects");
        return -1;
    }
    return 0;
}

static void fold_release(Fold *fold) {
    Py_CLEAR(fold->folder);
    Py_CLEAR(fold->folded);
    Py_CLEAR(fold->keep);
    Py_CLEAR(fold->seen);
    Py_CLEAR(fold->full);
    Py_CLEAR(fold->matches);
    Py_CLEAR(fold->counters);
    Py_CLEAR(fold->shadow);
    Py_CLEAR(fold->rank_key);
    Py_CLEAR(fold->host_key);
    Py_CLEAR(fold->shipped);
    Py_CLEAR(fold->inherited);
    Py_CLEAR(fold->assumed);
}

/* Keeper(folder)(host, pid, rank, emitter, desc) -> bool: folder.keep_described(...), decided in C
 * where try_fold and keep_in_c can (as in digest), else by the folder. The apply side of a
 * parallel scan folds every record the workers shipped with it. */
typedef struct {
    PyObject_HEAD Fold fold;
} Keeper;

static void keeper_dealloc(Keeper *k) {
    fold_release(&k->fold);
    Py_TYPE(k)->tp_free((PyObject *)k);
}

static PyObject *keeper_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *folder;
    if (!PyArg_ParseTuple(args, "O", &folder))
        return NULL;
    Keeper *k = (Keeper *)type->tp_alloc(type, 0);
    if (!k)
        return NULL;
    if (fold_init(&k->fold, folder) < 0) {
        Py_DECREF(k);
        return NULL;
    }
    return (PyObject *)k;
}

static PyObject *keeper_call(Keeper *k, PyObject *args, PyObject *kwargs) {
    PyObject *host, *pid, *rank, *emitter, *desc;
    if (!PyArg_ParseTuple(args, "OOOOO", &host, &pid, &rank, &emitter, &desc))
        return NULL;
    if (PyUnicode_Check(host) && (rank == Py_None || PyLong_Check(rank)) && (pid == Py_None || PyLong_Check(pid))) {
        int r = try_fold(&k->fold, host, rank, pid, emitter, desc);
        if (r < 0)
            return NULL;
        if (r == 1)
            Py_RETURN_FALSE;
        r = keep_in_c(&k->fold, host, rank, pid, emitter, desc);
        if (r < 0)
            return NULL;
        if (r != 2)
            return PyBool_FromLong(r == 0);
    }
    return PyObject_CallFunctionObjArgs(k->fold.keep, host, pid, rank, emitter, desc, NULL);
}

static PyTypeObject KeeperType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "diag.scan._core.Keeper",
    .tp_basicsize = sizeof(Keeper),
    .tp_dealloc = (destructor)keeper_dealloc,
    .tp_call = (ternaryfunc)keeper_call,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = keeper_new,
    .tp_doc = "Keeper(folder): folder.keep_described, decided in C where it can.",
};

/* --- the ordered apply ----------------------------------------------------------------------- */

/* apply(records, ctx) -> None: diag.scan.scanner.Scanner.apply's loop, in order, over ``records`` (any
 * iterable of records). Every record with a host is folded here (with ``folder``, as the Keeper does);
 * the communicator lines of a process (a lone ``comm_rank`` match, or one followed by rule matches whose
 * samples are full: NCCL's "Init COMPLETE") are applied here too, with the effects of
 * Facts.observe_rank_line and SigStats.count_hit in their order. Every other record, and one whose rule
 * samples are not full yet, goes to ``one(record, decided)`` (decided: the fold already kept it), the
 * Python loop's body. ctx is the tuple
 * (line_base, index, facts, stats_of, rule_keys, rank_entry, max_samples, max_distinct, described,
 *  describe, folder or None, one): rule_keys[i] is the statistics key of a rule entry, None for a fact. */
static PyObject *s_nccl_info, *s_slurm_messages, *s_max_nranks, *s_ranks, *s_samples, *s_count, *s_hosts,
    *s_captures, *s_rank, *s_nranks, *s_host, *s_rank_of_process, *s_host_of_rank, *u_nccl, *u_info, *u_slurm;

#define HOST_OF_RANK_CAP 100000 /* Facts.observe_rank_line's caps */
#define HOST_RANKS_CAP 4096

typedef struct {
    PyObject *facts, *hosts, *rank_of_process, *host_of_rank, *host_fn, *stats_of, *rule_keys, *described,
        *describe, *one, *line_base, *index;
    long rank_entry;
    Py_ssize_t max_samples, max_distinct;
    int nccl_info, slurm;
} Applier;

static int set_true(PyObject *obj, PyObject *name) { return PyObject_SetAttr(obj, name, Py_True); }

/* len(getattr(obj, name)) (a sized container), or -1 with an exception. */
static Py_ssize_t attr_len(PyObject *obj, PyObject *name) {
    PyObject *v = PyObject_GetAttr(obj, name);
    if (!v)
        return -1;
    Py_ssize_t n = PyObject_Size(v);
    Py_DECREF(v);
    return n;
}

/* Facts.observe_rank_line(host, pid, emitter, level, groups, (index, line_no)); the rank written (new
 * reference) or NULL. */
static PyObject *observe_rank_line(Applier *a, PyObject *host, PyObject *pid, PyObject *emitter, PyObject *level,
                                   PyObject *groups, PyObject *line_no) {
    int nccl = PyUnicode_Check(emitter) && PyUnicode_Compare(emitter, u_nccl) == 0;
    if (nccl && PyUnicode_Check(level) && PyUnicode_Compare(level, u_info) == 0) {
        if (!a->nccl_info) {
            if (set_true(a->facts, s_nccl_info) < 0)
                return NULL;
            a->nccl_info = 1;
        }
    } else if (!nccl && PyUnicode_Check(emitter) && PyUnicode_Compare(emitter, u_slurm) == 0) {
        if (!a->slurm) {
            if (set_true(a->facts, s_slurm_messages) < 0)
                return NULL;
            a->slurm = 1;
        }
    }
    /* facts.host(host, order) twice in the Python form: either call makes a missing host */
    PyObject *hf = PyDict_GetItemWithError(a->hosts, host);
    if (hf) {
        Py_INCREF(hf);
    } else {
        if (PyErr_Occurred())
            return NULL;
        PyObject *order = PyTuple_Pack(2, a->index, line_no);
        hf = order ? PyObject_CallFunctionObjArgs(a->host_fn, host, order, NULL) : NULL;
        Py_XDECREF(order);
        if (!hf)
            return NULL;
    }
    PyObject *rank = NULL, *nranks = NULL, *key = NULL, *ranks = NULL, *cur = NULL;
    PyObject *rank_s = PyDict_GetItemWithError(groups, s_rank); /* borrowed */
    if (!rank_s) {
        if (!PyErr_Occurred())
            PyErr_SetObject(PyExc_KeyError, s_rank);
        goto fail;
    }
    if (!(rank = PyNumber_Long(rank_s)))
        goto fail;
    PyObject *nranks_s = PyDict_GetItemWithError(groups, s_nranks);
    if (!nranks_s) {
        if (!PyErr_Occurred())
            PyErr_SetObject(PyExc_KeyError, s_nranks);
        goto fail;
    }
    if (!(nranks = PyNumber_Long(nranks_s)) || !(cur = PyObject_GetAttr(a->facts, s_max_nranks)))
        goto fail;
    int more = PyObject_RichCompareBool(nranks, cur, Py_GT);
    if (more < 0 || (more && PyObject_SetAttr(a->facts, s_max_nranks, nranks) < 0))
        goto fail;
    if (!(key = PyTuple_Pack(2, host, pid)) || PyDict_SetItem(a->rank_of_process, key, rank) < 0)
        goto fail;
    if (PyDict_GET_SIZE(a->host_of_rank) < HOST_OF_RANK_CAP && PyDict_SetItem(a->host_of_rank, rank, host) < 0)
        goto fail;
    if (!(ranks = PyObject_GetAttr(hf, s_ranks)))
        goto fail;
    Py_ssize_t held = PyObject_Size(ranks);
    if (held < 0)
        goto fail;
    if (held < HOST_RANKS_CAP) {
        if (PyAnySet_Check(ranks) ? PySet_Add(ranks, rank) < 0 : !PyObject_CallMethod(ranks, "add", "O", rank))
            goto fail;
    }
    Py_DECREF(hf), Py_DECREF(nranks), Py_DECREF(key), Py_DECREF(ranks), Py_DECREF(cur);
    return rank;
fail:
    Py_DECREF(hf);
    Py_XDECREF(rank), Py_XDECREF(nranks), Py_XDECREF(key), Py_XDECREF(ranks), Py_XDECREF(cur);
    return NULL;
}

/* SigStats.count_hit(host, rank, groups) of a statistics object whose samples are full. */
static int count_hit(Applier *a, PyObject *stats, PyObject *host, PyObject *rank, PyObject *groups) {
    PyObject *count = PyObject_GetAttr(stats, s_count), *next = NULL, *hosts = NULL, *ranks = NULL, *captures = NULL;
    int rc = -1;
    if (!count || !(next = PyNumber_Add(count, one)) || PyObject_SetAttr(stats, s_count, next) < 0)
        goto done;
    int truthy = PyObject_IsTrue(host);
    if (truthy < 0)
        goto done;
    if (truthy) {
        if (!(hosts = PyObject_GetAttr(stats, s_hosts)) || !PyDict_Check(hosts))
            goto bad;
        PyObject *old = PyDict_GetItemWithError(hosts, host);
        if (!old && PyErr_Occurred())
            goto done;
        if (old || PyDict_GET_SIZE(hosts) < a->max_distinct) {
            PyObject *v = old ? PyNumber_Add(old, one) : PyLong_FromLong(1);
            if (!v)
                goto done;
            int set = PyDict_SetItem(hosts, host, v);
            Py_DECREF(v);
            if (set < 0)
                goto done;
        }
    }
    if (rank != Py_None) {
        if (!(ranks = PyObject_GetAttr(stats, s_ranks)) || !PyAnySet_Check(ranks))
            goto bad;
        if (PySet_GET_SIZE(ranks) < a->max_distinct && PySet_Add(ranks, rank) < 0)
            goto done;
    }
    if (!(captures = PyObject_GetAttr(stats, s_captures)) || !PyDict_Check(captures) || !PyDict_Check(groups))
        goto bad;
    Py_ssize_t pos = 0;
    PyObject *name, *value;
    while (PyDict_Next(groups, &pos, &name, &value)) {
        if (value == Py_None)
            continue;
        Py_INCREF(name), Py_INCREF(value); /* the groups dict is not changed here, but stay safe */
        PyObject *values = PyDict_GetItemWithError(captures, name);
        int ok = 1;
        if (!values) {
            if (PyErr_Occurred() || !(values = PyDict_New()) || PyDict_SetItem(captures, name, values) < 0)
                ok = 0;
            else
                Py_DECREF(values); /* held by captures */
        }
        if (ok && !PyDict_Check(values)) {
            PyErr_SetString(PyExc_TypeError, "captured values are not a dict");
            ok = 0;
        }
        if (ok && PyDict_GET_SIZE(values) < a->max_distinct && PyDict_SetItem(values, value, Py_None) < 0)
            ok = 0;
        Py_DECREF(name), Py_DECREF(value);
        if (!ok)
            goto done;
    }
    rc = 0;
    goto done;
bad:
    if (!PyErr_Occurred())
        PyErr_SetString(PyExc_TypeError, "statistics are not what the core expects");
done:
    Py_XDECREF(count), Py_XDECREF(next), Py_XDECREF(hosts), Py_XDECREF(ranks), Py_XDECREF(captures);
    return rc;
}

/* The record to ``one``. */
static int apply_one(Applier *a, PyObject *record, int decided) {
    PyObject *r = PyObject_CallFunctionObjArgs(a->one, record, decided ? Py_True : Py_False, NULL);
    if (!r)
        return -1;
    Py_DECREF(r);
    /* the Python body may have set these (or any fact): read again */
    PyObject *v = PyObject_GetAttr(a->facts, s_nccl_info);
    if (!v)
        return -1;
    a->nccl_info = v == Py_True;
    Py_DECREF(v);
    if (!(v = PyObject_GetAttr(a->facts, s_slurm_messages)))
        return -1;
    a->slurm = v == Py_True;
    Py_DECREF(v);
    return 0;
}

/* folder.describe(matches), once per matches object (the Python loop's ``described``, shared). Borrowed. */
static PyObject *described(Applier *a, PyObject *matches) {
    PyObject *id = PyLong_FromVoidPtr(matches);
    if (!id)
        return NULL;
    PyObject *known = PyDict_GetItemWithError(a->described, id);
    if (known && PyTuple_Check(known) && PyTuple_GET_SIZE(known) == 2 && PyTuple_GET_ITEM(known, 0) == matches) {
        Py_DECREF(id);
        return PyTuple_GET_ITEM(known, 1);
    }
    if (PyErr_Occurred()) {
        Py_DECREF(id);
        return NULL;
    }
    PyObject *desc = PyObject_CallFunctionObjArgs(a->describe, matches, NULL);
    PyObject *pair = desc ? PyTuple_Pack(2, matches, desc) : NULL;
    Py_XDECREF(desc);
    int rc = pair ? PyDict_SetItem(a->described, id, pair) : -1;
    Py_DECREF(id);
    Py_XDECREF(pair);
    return rc < 0 ? NULL : PyTuple_GET_ITEM(pair, 1); /* held by the dict */
}

static PyObject *core_apply(PyObject *self, PyObject *args) {
    PyObject *records, *ctx, *folder;
    if (!PyArg_ParseTuple(args, "OO!", &records, &PyTuple_Type, &ctx))
        return NULL;
    Applier a = {0};
    Fold fold = {0};
    long max_samples, max_distinct;
    if (!PyArg_ParseTuple(ctx, "OOOO!O!lllO!OOO", &a.line_base, &a.index, &a.facts, &PyDict_Type, &a.stats_of,
                          &PyList_Type, &a.rule_keys, &a.rank_entry, &max_samples, &max_distinct, &PyDict_Type,
                          &a.described, &a.describe, &folder, &a.one))
        return NULL;
    a.max_samples = max_samples;
    a.max_distinct = max_distinct;
    PyObject *it = NULL, *record = NULL, *v;
    int ok = 0;
    a.hosts = PyObject_GetAttr(a.facts, s_hosts);
    a.rank_of_process = PyObject_GetAttr(a.facts, s_rank_of_process);
    a.host_of_rank = PyObject_GetAttr(a.facts, s_host_of_rank);
    a.host_fn = PyObject_GetAttr(a.facts, s_host);
    if (!a.hosts || !a.rank_of_process || !a.host_of_rank || !a.host_fn || !PyDict_Check(a.hosts) ||
        !PyDict_Check(a.rank_of_process) || !PyDict_Check(a.host_of_rank)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "facts are not what the core expects");
        goto done;
    }
    if (!(v = PyObject_GetAttr(a.facts, s_nccl_info)))
        goto done;
    a.nccl_info = v == Py_True;
    Py_DECREF(v);
    if (!(v = PyObject_GetAttr(a.facts, s_slurm_messages)))
        goto done;
    a.slurm = v == Py_True;
    Py_DECREF(v);
    if (folder != Py_None && fold_init(&fold, folder) < 0)
        goto done;
    if (!(it = PyObject_GetIter(records)))
        goto done;
    Py_ssize_t nkeys = PyList_GET_SIZE(a.rule_keys);
    while ((record = PyIter_Next(it)) != NULL) {
        PyObject *host, *pid, *rank, *matches, *first, *groups = NULL;
        long entry = -1;
        int kept = 0; /* the fold kept it (decided here) */
        if (!PyTuple_Check(record) || PyTuple_GET_SIZE(record) != 12)
            goto general;
        host = PyTuple_GET_ITEM(record, 3), pid = PyTuple_GET_ITEM(record, 4), rank = PyTuple_GET_ITEM(record, 5);
        matches = PyTuple_GET_ITEM(record, 11);
        if (!PyTuple_Check(matches))
            goto general;
        if (PyTuple_GET_SIZE(matches)) {
            first = PyTuple_GET_ITEM(matches, 0);
            if (!PyTuple_Check(first) || PyTuple_GET_SIZE(first) != 2 || !PyLong_Check(PyTuple_GET_ITEM(first, 0)))
                goto general;
            entry = PyLong_AsLong(PyTuple_GET_ITEM(first, 0));
            if (entry == -1 && PyErr_Occurred())
                PyErr_Clear(), entry = -2;
            if (entry == -1)
                goto general; /* a sampled line (diag.scan.sample.SAMPLE_INDEX): nothing else sees it */
            groups = PyTuple_GET_ITEM(first, 1);
        }
        if (fold.keep && host != Py_None) { /* the Keeper's decision, as the Python loop asks it */
            PyObject *desc = described(&a, matches), *emitter = PyTuple_GET_ITEM(record, 10);
            if (!desc)
                goto fail;
            int r = 2;
            if (PyUnicode_Check(host) && (rank == Py_None || PyLong_Check(rank)) &&
                (pid == Py_None || PyLong_Check(pid))) {
                if ((r = try_fold(&fold, host, rank, pid, emitter, desc)) < 0)
                    goto fail;
                if (r == 1)
                    goto next;
                if ((r = keep_in_c(&fold, host, rank, pid, emitter, desc)) < 0)
                    goto fail;
            }
            if (r == 2) {
                PyObject *keep = PyObject_CallFunctionObjArgs(fold.keep, host, pid, rank, emitter, desc, NULL);
                if (!keep)
                    goto fail;
                r = PyObject_IsTrue(keep);
                Py_DECREF(keep);
                if (r < 0)
                    goto fail;
                r = r ? 0 : 1;
            }
            if (r == 1)
                goto next;
            kept = 1;
        }
        if (!PyUnicode_Check(host) || PyUnicode_GET_LENGTH(host) == 0 || !PyLong_Check(pid) ||
            !(rank == Py_None || PyLong_Check(rank)) || entry != a.rank_entry || !PyDict_Check(groups))
            goto general;
        /* the rule matches after it: each a rule entry whose samples are full, or Python applies the line */
        Py_ssize_t nm = PyTuple_GET_SIZE(matches);
        PyObject *counted[MAX_MEMBERS];
        int fast = nm <= MAX_MEMBERS;
        for (Py_ssize_t j = 1; j < nm && fast; j++) {
            PyObject *m = PyTuple_GET_ITEM(matches, j);
            counted[j] = NULL;
            if (!PyTuple_Check(m) || PyTuple_GET_SIZE(m) != 2 || !PyDict_Check(PyTuple_GET_ITEM(m, 1))) {
                fast = 0;
                break;
            }
            Py_ssize_t i = PyLong_AsSsize_t(PyTuple_GET_ITEM(m, 0));
            if (i == -1 && PyErr_Occurred())
                PyErr_Clear();
            if (i < 0 || i >= nkeys || PyList_GET_ITEM(a.rule_keys, i) == Py_None) {
                fast = 0;
                break;
            }
            PyObject *stats = PyDict_GetItemWithError(a.stats_of, PyList_GET_ITEM(a.rule_keys, i));
            if (!stats) {
                if (PyErr_Occurred())
                    goto fail;
                fast = 0;
                break;
            }
            Py_ssize_t held = attr_len(stats, s_samples);
            if (held < 0)
                goto fail;
            fast = held >= a.max_samples;
            counted[j] = stats;
        }
        if (!fast)
            goto general;
        PyObject *line_no = PyNumber_Add(PyTuple_GET_ITEM(record, 0), a.line_base);
        if (!line_no)
            goto fail;
        PyObject *written = observe_rank_line(&a, host, pid, PyTuple_GET_ITEM(record, 10), PyTuple_GET_ITEM(record, 8),
                                              groups, line_no);
        Py_DECREF(line_no);
        if (!written)
            goto fail;
        PyObject *ev_rank = rank != Py_None ? rank : written; /* rank_for(host, pid): the rank just written */
        for (Py_ssize_t j = 1; j < nm; j++)
            if (count_hit(&a, counted[j], host, ev_rank, PyTuple_GET_ITEM(PyTuple_GET_ITEM(matches, j), 1)) < 0) {
                Py_DECREF(written);
                goto fail;
            }
        Py_DECREF(written);
        goto next;
    general:
        if (apply_one(&a, record, kept) < 0)
            goto fail;
    next:
        Py_CLEAR(record);
    }
    if (PyErr_Occurred())
        goto done;
    ok = 1;
    goto done;
fail:
    Py_CLEAR(record);
done:
    Py_XDECREF(it);
    Py_XDECREF(a.hosts), Py_XDECREF(a.rank_of_process), Py_XDECREF(a.host_of_rank), Py_XDECREF(a.host_fn);
    fold_release(&fold);
    if (!ok)
        return NULL;
    Py_RETURN_NONE;
}

/* --- condensing runs of communicator lines (diag.scan.runs) ---------------------------------- */

/* A growable buffer of C integers, for RankRun's arrays. */
typedef struct {
    char *data;
    Py_ssize_t len, cap, item;
} IntBuf;

static int intbuf_put(IntBuf *b, const void *v) {
    if (b->len == b->cap) {
        Py_ssize_t cap = b->cap ? b->cap * 2 : 64;
        char *data = PyMem_Realloc(b->data, cap * b->item);
        if (!data) {
            PyErr_NoMemory();
            return -1;
        }
        b->data = data, b->cap = cap;
    }
    memcpy(b->data + b->len * b->item, v, b->item);
    b->len++;
    return 0;
}

/* array.array(typecode, the buffer's bytes): new reference. */
static PyObject *intbuf_array(IntBuf *b, PyObject *array_type, const char *typecode) {
    PyObject *raw = PyBytes_FromStringAndSize(b->data ? b->data : "", b->len * b->item);
    if (!raw)
        return NULL;
    PyObject *out = PyObject_CallFunction(array_type, "sO", typecode, raw);
    Py_DECREF(raw);
    return out;
}

/* int(groups[name]): new reference. */
static PyObject *group_long(PyObject *groups, PyObject *name) {
    PyObject *v = PyDict_GetItemWithError(groups, name);
    if (!v) {
        if (!PyErr_Occurred())
            PyErr_SetObject(PyExc_KeyError, name);
        return NULL;
    }
    return PyNumber_Long(v);
}

/* runs._summarise(run, entries): the RankRun of records[from:to] (every one a communicator line that
 * condense took). New reference. */
static PyObject *summarise(PyObject *records, Py_ssize_t from, Py_ssize_t to, PyObject *rule_keys, PyObject *rank_run,
                           PyObject *array_type) {
    PyObject *hosts = PyDict_New(), *first_lines = PyList_New(0), *counted = PyDict_New(), *max_nranks = PyLong_FromLong(0);
    PyObject *out = NULL, *host_list = NULL, *a_hosts = NULL, *a_pids = NULL, *a_ranks = NULL, *final = NULL;
    IntBuf host_index = {NULL, 0, 0, sizeof(long)}, pids = {NULL, 0, 0, sizeof(long long)},
           ranks = {NULL, 0, 0, sizeof(long long)};
    int nccl_info = 0, slurm = 0;
    if (!hosts || !first_lines || !counted || !max_nranks)
        goto done;
    for (Py_ssize_t r = from; r < to; r++) {
        PyObject *record = PyList_GET_ITEM(records, r);
        PyObject *line_no = PyTuple_GET_ITEM(record, 0), *host = PyTuple_GET_ITEM(record, 3),
                 *pid = PyTuple_GET_ITEM(record, 4), *rank = PyTuple_GET_ITEM(record, 5),
                 *level = PyTuple_GET_ITEM(record, 8), *emitter = PyTuple_GET_ITEM(record, 10),
                 *matches = PyTuple_GET_ITEM(record, 11);
        PyObject *at = PyDict_GetItemWithError(hosts, host);
        long index;
        if (at) {
            index = PyLong_AsLong(at);
        } else {
            if (PyErr_Occurred())
                goto done;
            index = (long)PyList_GET_SIZE(first_lines);
            PyObject *v = PyLong_FromLong(index);
            if (!v)
                goto done;
            int rc = PyDict_SetItem(hosts, host, v);
            Py_DECREF(v);
            if (rc < 0 || PyList_Append(first_lines, line_no) < 0)
                goto done;
        }
        PyObject *groups = PyTuple_GET_ITEM(PyTuple_GET_ITEM(matches, 0), 1);
        PyObject *written = group_long(groups, s_rank);
        if (!written)
            goto done;
        long long pid_v = PyLong_AsLongLong(pid), rank_v = PyLong_AsLongLong(written);
        if (((pid_v == -1 || rank_v == -1) && PyErr_Occurred()) || intbuf_put(&host_index, &index) < 0 ||
            intbuf_put(&pids, &pid_v) < 0 || intbuf_put(&ranks, &rank_v) < 0) {
            Py_DECREF(written);
            goto done;
        }
        PyObject *nranks = group_long(groups, s_nranks);
        int more = nranks ? PyObject_RichCompareBool(nranks, max_nranks, Py_GT) : -1;
        if (more < 0) {
            Py_XDECREF(nranks);
            Py_DECREF(written);
            goto done;
        }
        if (more)
            Py_SETREF(max_nranks, nranks);
        else
            Py_DECREF(nranks);
        int nccl = PyUnicode_Check(emitter) && PyUnicode_Compare(emitter, u_nccl) == 0;
        if (nccl && PyUnicode_Check(level) && PyUnicode_Compare(level, u_info) == 0)
            nccl_info = 1;
        else if (!nccl && PyUnicode_Check(emitter) && PyUnicode_Compare(emitter, u_slurm) == 0)
            slurm = 1;
        Py_ssize_t nm = PyTuple_GET_SIZE(matches);
        PyObject *ev_rank = rank != Py_None ? rank : written; /* the rank this very line just gave the process */
        for (Py_ssize_t j = 1; j < nm; j++) {
            PyObject *m = PyTuple_GET_ITEM(matches, j);
            PyObject *key = PyList_GET_ITEM(rule_keys, PyLong_AsSsize_t(PyTuple_GET_ITEM(m, 0)));
            PyObject *agg = PyDict_GetItemWithError(counted, key), *v;
            if (!agg) {
                if (PyErr_Occurred())
                    goto fail_line;
                agg = Py_BuildValue("[iNNN]", 0, PyDict_New(), PyDict_New(), PyDict_New());
                if (!agg)
                    goto fail_line;
                int rc = PyDict_SetItem(counted, key, agg);
                Py_DECREF(agg);
                if (rc < 0)
                    goto fail_line;
            }
            if (!(v = PyNumber_Add(PyList_GET_ITEM(agg, 0), one)))
                goto fail_line;
            PyList_SetItem(agg, 0, v);
            if (bump(PyList_GET_ITEM(agg, 1), host) < 0 || PyDict_SetItem(PyList_GET_ITEM(agg, 2), ev_rank, Py_None) < 0)
                goto fail_line;
            PyObject *captures = PyList_GET_ITEM(agg, 3), *name, *value, *mg = PyTuple_GET_ITEM(m, 1);
            Py_ssize_t pos = 0;
            while (PyDict_Next(mg, &pos, &name, &value)) {
                if (value == Py_None)
                    continue;
                PyObject *values = PyDict_GetItemWithError(captures, name);
                if (!values) {
                    if (PyErr_Occurred() || !(values = PyDict_New()))
                        goto fail_line;
                    int rc = PyDict_SetItem(captures, name, values);
                    Py_DECREF(values);
                    if (rc < 0)
                        goto fail_line;
                }
                if (PyDict_SetItem(values, value, Py_None) < 0)
                    goto fail_line;
            }
        }
        Py_DECREF(written);
        continue;
    fail_line:
        Py_DECREF(written);
        goto done;
    }
    if (!(host_list = PyDict_Keys(hosts)) || !(a_hosts = intbuf_array(&host_index, array_type, "l")) ||
        !(a_pids = intbuf_array(&pids, array_type, "q")) || !(a_ranks = intbuf_array(&ranks, array_type, "q")) ||
        !(final = PyDict_New()))
        goto done;
    {
        Py_ssize_t pos = 0;
        PyObject *key, *agg;
        while (PyDict_Next(counted, &pos, &key, &agg)) {
            PyObject *t = PyList_AsTuple(agg);
            if (!t || PyDict_SetItem(final, key, t) < 0) {
                Py_XDECREF(t);
                goto done;
            }
            Py_DECREF(t);
        }
    }
    out = PyObject_CallFunction(rank_run, "OOOOOOOOO", host_list, first_lines, a_hosts, a_pids, a_ranks, max_nranks,
                                nccl_info ? Py_True : Py_False, slurm ? Py_True : Py_False, final);
done:
    Py_XDECREF(hosts), Py_XDECREF(first_lines), Py_XDECREF(counted), Py_XDECREF(max_nranks);
    Py_XDECREF(host_list), Py_XDECREF(a_hosts), Py_XDECREF(a_pids), Py_XDECREF(a_ranks), Py_XDECREF(final);
    PyMem_Free(host_index.data), PyMem_Free(pids.data), PyMem_Free(ranks.data);
    return out;
}

/* condense(records, ctx) -> list, or None for Python to do it: diag.scan.runs.condense. ctx: (rank_entry, rule_keys, shipped,
 * max_samples, min_run, RankRun, array.array); rule_keys as for apply; ``shipped`` is updated. */
static PyObject *core_condense(PyObject *self, PyObject *args) {
    PyObject *records, *ctx, *rule_keys, *shipped, *rank_run, *array_type;
    long rank_entry, max_samples, min_run;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &records, &PyTuple_Type, &ctx) ||
        !PyArg_ParseTuple(ctx, "lO!O!llOO", &rank_entry, &PyList_Type, &rule_keys, &PyDict_Type, &shipped,
                          &max_samples, &min_run, &rank_run, &array_type))
        return NULL;
    Py_ssize_t count = PyList_GET_SIZE(records), nkeys = PyList_GET_SIZE(rule_keys), run_from = 0, run_len = 0;
    PyObject *out = PyList_New(0);
    if (!out)
        return NULL;
    /* Every record first: a tuple of 12 whose matches are (entry, dict) pairs, a communicator line's
     * host a str and its pid an int; None (before anything changed) for Python to condense otherwise. */
    for (Py_ssize_t r = 0; r < count; r++) {
        PyObject *record = PyList_GET_ITEM(records, r), *matches;
        if (!PyTuple_Check(record) || PyTuple_GET_SIZE(record) != 12 ||
            !PyTuple_Check(matches = PyTuple_GET_ITEM(record, 11)))
            goto python;
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(matches); j++) {
            PyObject *m = PyTuple_GET_ITEM(matches, j);
            if (!PyTuple_Check(m) || PyTuple_GET_SIZE(m) != 2 || !PyLong_Check(PyTuple_GET_ITEM(m, 0)) ||
                !PyDict_Check(PyTuple_GET_ITEM(m, 1)))
                goto python;
            Py_ssize_t i = PyLong_AsSsize_t(PyTuple_GET_ITEM(m, 0));
            if (i == -1 && PyErr_Occurred())
                PyErr_Clear(), i = -2;
            if (i < (j ? 0 : -1) || i >= nkeys)
                goto python;
        }
        PyObject *host = PyTuple_GET_ITEM(record, 3), *pid = PyTuple_GET_ITEM(record, 4),
                 *rank = PyTuple_GET_ITEM(record, 5);
        if ((host != Py_None && !PyUnicode_Check(host)) || (pid != Py_None && !PyLong_Check(pid)) ||
            (rank != Py_None && !PyLong_Check(rank)))
            goto python;
    }
    for (Py_ssize_t r = 0; r <= count; r++) {
        PyObject *record = r < count ? PyList_GET_ITEM(records, r) : NULL;
        if (record) {
            PyObject *host = PyTuple_GET_ITEM(record, 3), *pid = PyTuple_GET_ITEM(record, 4),
                     *matches = PyTuple_GET_ITEM(record, 11);
            Py_ssize_t nm = PyTuple_GET_SIZE(matches);
            int truthy = PyObject_IsTrue(host);
            if (truthy < 0)
                goto fail;
            if (truthy && pid != Py_None && nm &&
                PyLong_AsLong(PyTuple_GET_ITEM(PyTuple_GET_ITEM(matches, 0), 0)) == rank_entry) {
                int all = 1;
                for (Py_ssize_t j = 1; j < nm && all; j++) {
                    PyObject *i = PyTuple_GET_ITEM(PyTuple_GET_ITEM(matches, j), 0);
                    if (PyList_GET_ITEM(rule_keys, PyLong_AsSsize_t(i)) == Py_None) {
                        all = 0;
                        break;
                    }
                    PyObject *n = PyDict_GetItemWithError(shipped, i);
                    if (!n && PyErr_Occurred())
                        goto fail;
                    long v = n ? PyLong_AsLong(n) : 0;
                    if (v == -1 && PyErr_Occurred())
                        goto fail;
                    all = v >= max_samples;
                }
                if (all) {
                    if (!run_len)
                        run_from = r;
                    run_len++;
                    for (Py_ssize_t j = 1; j < nm; j++)
                        if (bump(shipped, PyTuple_GET_ITEM(PyTuple_GET_ITEM(matches, j), 0)) < 0)
                            goto fail;
                    continue;
                }
            }
        }
        /* close the run */
        if (run_len >= min_run) {
            PyObject *summary = summarise(records, run_from, run_from + run_len, rule_keys, rank_run, array_type);
            if (!summary || PyList_Append(out, summary) < 0) {
                Py_XDECREF(summary);
                goto fail;
            }
            Py_DECREF(summary);
        } else {
            for (Py_ssize_t k = run_from; k < run_from + run_len; k++)
                if (PyList_Append(out, PyList_GET_ITEM(records, k)) < 0)
                    goto fail;
        }
        run_len = 0;
        if (!record)
            break;
        if (PyList_Append(out, record) < 0)
            goto fail;
        PyObject *matches = PyTuple_GET_ITEM(record, 11);
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(matches); j++) {
            PyObject *i = PyTuple_GET_ITEM(PyTuple_GET_ITEM(matches, j), 0);
            Py_ssize_t e = PyLong_AsSsize_t(i);
            if (e >= 0 && PyList_GET_ITEM(rule_keys, e) != Py_None && bump(shipped, i) < 0)
                goto fail;
        }
    }
    return out;
python:
    Py_DECREF(out);
    Py_RETURN_NONE;
fail:
    Py_DECREF(out);
    return NULL;
}


/* The repeats try_fold folded, by (host, description, rank token): the same line again folds the same
 * way as long as the folder's memory was not forgotten since (its seen lines only grow until then, and
 * so do the rules whose samples are full), so it is counted here without a Python object, and the
 * counts are added to the folder's tables (whose keys try_fold made the first time) when a digest call
 * ends or the memory is forgotten. Since session 17 the table outlives the call: it is kept on the
 * folder (``Folder._core_cache``) and holds while the folder's ``_epoch`` (bumped by ``_forget``) and
 * its ``_seen`` and ``_full`` objects are the ones it was filled under, so a key folded in one block
 * is counted here in the next ones too (before, every block's first repeat of a key went through
 * try_fold's Python tuples, set and dicts). At most FOLD_SLOTS / 2 entries; none is added once full. */
#define FOLD_SLOTS 4096 /* a power of two; 128 KB: a dense log's scan uses about 1,100 (at most 2,048) */
#define FOLD_PROBES 8
typedef struct {
    PyObject *host, *desc; /* held, so that their addresses stay theirs */
    long long token;
    int32_t has_token;
    uint32_t count; /* lines counted since the last flush: at most one block's */
} FoldHit;

typedef struct {
    PyObject_HEAD FoldHit *slots;
    Py_ssize_t *order; /* the slots in use, in the order they were filled */
    Py_ssize_t used, forgot;
    PyObject *seen, *full; /* the folder's containers it was filled under (held: their addresses stay theirs) */
    Py_ssize_t epoch;
} FoldCache;

static Py_ssize_t fold_slot(const FoldCache *c, PyObject *host, PyObject *desc, long long token, int has_token,
                            int *found) {
    uint64_t h = ((uint64_t)(uintptr_t)host >> 4) * 0x9E3779B97F4A7C15ULL ^
                 ((uint64_t)(uintptr_t)desc >> 4) * 0xC2B2AE3D27D4EB4FULL ^ (uint64_t)token * 0x165667B19E3779F9ULL ^
                 (uint64_t)has_token;
    h ^= h >> 29;
    for (Py_ssize_t i = 0; i < FOLD_PROBES; i++) {
        Py_ssize_t at = (Py_ssize_t)((h + i) & (FOLD_SLOTS - 1));
        const FoldHit *e = &c->slots[at];
        if (!e->host) {
            *found = 0;
            return at;
        }
        if (e->host == host && e->desc == desc && e->token == token && e->has_token == has_token) {
            *found = 1;
            return at;
        }
    }
    *found = 0;
    return -1;
}

/* dict[key] += n (the key is there: try_fold made it). */
static int bump_by(PyObject *dict, PyObject *key, Py_ssize_t n) {
    PyObject *old = PyDict_GetItemWithError(dict, key), *by = PyLong_FromSsize_t(n);
    if (!by || (!old && PyErr_Occurred())) {
        Py_XDECREF(by);
        return -1;
    }
    PyObject *v = old ? PyNumber_Add(old, by) : (Py_INCREF(by), by);
    Py_DECREF(by);
    if (!v)
        return -1;
    int rc = PyDict_SetItem(dict, key, v);
    Py_DECREF(v);
    return rc;
}

/* Add the held counts to the folder's tables; the entries stay. 0, or -1 with an exception. */
static int fold_cache_flush(FoldCache *c, Fold *fold) {
    for (Py_ssize_t u = 0; u < c->used; u++) {
        FoldHit *e = &c->slots[c->order[u]];
        if (!e->count)
            continue;
        PyObject *rules = PyTuple_GET_ITEM(e->desc, 1), *counters = PyTuple_GET_ITEM(e->desc, 4);
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(rules); i++) {
            PyObject *k = PyTuple_Pack(2, PyTuple_GET_ITEM(rules, i), e->host);
            int rc = k ? bump_by(fold->matches, k, e->count) : -1;
            Py_XDECREF(k);
            if (rc < 0)
                return -1;
        }
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(counters); i++) {
            PyObject *k = PyTuple_Pack(2, e->host, PyTuple_GET_ITEM(counters, i));
            int rc = k ? bump_by(fold->counters, k, e->count) : -1;
            Py_XDECREF(k);
            if (rc < 0)
                return -1;
        }
        e->count = 0;
    }
    return 0;
}

/* Forget every entry (their counts too: flush them first where they count). */
static void fold_cache_clear(FoldCache *c) {
    for (Py_ssize_t u = 0; u < c->used; u++) {
        FoldHit *e = &c->slots[c->order[u]];
        Py_CLEAR(e->host);
        Py_CLEAR(e->desc);
        e->count = 0;
    }
    c->used = 0;
}

static void fold_cache_dealloc(FoldCache *c) {
    if (c->slots && c->order)
        fold_cache_clear(c);
    PyMem_Free(c->slots);
    PyMem_Free(c->order);
    Py_CLEAR(c->seen);
    Py_CLEAR(c->full);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

static PyObject *fold_cache_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    if (!PyArg_ParseTuple(args, ""))
        return NULL;
    FoldCache *c = (FoldCache *)type->tp_alloc(type, 0);
    if (!c)
        return NULL;
    if (!(c->slots = PyMem_Calloc(FOLD_SLOTS, sizeof(FoldHit))) ||
        !(c->order = PyMem_Malloc(sizeof(Py_ssize_t) * (FOLD_SLOTS / 2)))) {
        Py_DECREF(c);
        return PyErr_NoMemory();
    }
    c->epoch = -1;
    return (PyObject *)c;
}

static PyObject *fold_cache_size(FoldCache *c, PyObject *unused) { return PyLong_FromSsize_t(c->used); }

static PyMethodDef fold_cache_methods[] = {
    {"size", (PyCFunction)fold_cache_size, METH_NOARGS, "How many folded keys are held."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject FoldCacheType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "diag.scan._core.FoldCache",
    .tp_basicsize = sizeof(FoldCache),
    .tp_dealloc = (destructor)fold_cache_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = fold_cache_new,
    .tp_methods = fold_cache_methods,
    .tp_doc = "The keys digest folded for one folder, by (host, description, rank token) (Folder._core_cache).",
};

/* The folder's cache (created and kept on the folder the first time), emptied unless it was filled under
 * the folder's present memory: the same _epoch, _seen and _full. New reference, or NULL with an exception. */
static FoldCache *fold_cache_of(Fold *fold) {
    Py_ssize_t epoch = get_ssize(fold->folder, "_epoch");
    if (epoch == -1 && PyErr_Occurred())
        return NULL;
    PyObject *held = PyObject_GetAttrString(fold->folder, "_core_cache");
    if (!held)
        return NULL;
    if (!PyObject_TypeCheck(held, &FoldCacheType)) {
        Py_DECREF(held);
        if (!(held = PyObject_CallNoArgs((PyObject *)&FoldCacheType)))
            return NULL;
        if (PyObject_SetAttrString(fold->folder, "_core_cache", held) < 0) {
            Py_DECREF(held);
            return NULL;
        }
    }
    FoldCache *c = (FoldCache *)held;
    if (c->epoch != epoch || c->seen != fold->seen || c->full != fold->full) {
        fold_cache_clear(c);
        c->epoch = epoch;
        Py_INCREF(fold->seen);
        Py_XSETREF(c->seen, fold->seen);
        Py_INCREF(fold->full);
        Py_XSETREF(c->full, fold->full);
    }
    return c;
}

/* The rank token of a line try_fold may fold (a description with no last-wins observation, nothing
 * order-dependent): 1 with *token, *has_token set when the cache may hold it, 2 for a rule match on a
 * line without a rank of its own (its token is the rank the folder's shadow gives its process: see
 * shadow_token), 0 when not (an unusual description, a rank too large). */
static int fold_cache_key(PyObject *desc, PyObject *rank, long long *token, int *has_token) {
    if (!PyTuple_Check(desc) || PyTuple_GET_SIZE(desc) != 7 || PyTuple_GET_ITEM(desc, 0) == Py_None ||
        PyTuple_GET_ITEM(desc, 3) != Py_False || !PyTuple_Check(PyTuple_GET_ITEM(desc, 1)) ||
        !PyTuple_Check(PyTuple_GET_ITEM(desc, 2)) || PyTuple_GET_SIZE(PyTuple_GET_ITEM(desc, 2)) != 0 ||
        !PyTuple_Check(PyTuple_GET_ITEM(desc, 4)))
        return 0;
    if (PyTuple_GET_SIZE(PyTuple_GET_ITEM(desc, 1)) == 0) {
        *token = 0, *has_token = 0;
        return 1;
    }
    if (rank == Py_None)
        return 2;
    if (!PyLong_Check(rank))
        return 0;
    int overflow = 0;
    *token = PyLong_AsLongLongAndOverflow(rank, &overflow);
    if (overflow || (*token == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    *has_token = 1;
    return 1;
}

/* A tuple of the n new references in items, stolen; NULL with an exception when one of them is NULL
 * (creating it failed) or the tuple cannot be made: every reference is released then. */
static PyObject *tuple_steal(Py_ssize_t n, PyObject **items) {
    PyObject *t = NULL;
    for (Py_ssize_t i = 0; i < n; i++)
        if (!items[i])
            goto fail;
    if (!(t = PyTuple_New(n)))
        goto fail;
    for (Py_ssize_t i = 0; i < n; i++)
        PyTuple_SET_ITEM(t, i, items[i]);
    return t;
fail:
    for (Py_ssize_t i = 0; i < n; i++)
        Py_XDECREF(items[i]);
    return NULL;
}

/* The rank the folder's shadow gives process (host, pid), as try_fold's token for a rule match on a
 * line without a rank of its own: 1 with *token and *value (borrowed) set when it holds an int, 0 when it
 * holds nothing or something else (try_fold decides the line then), -1 with an exception. */
static int shadow_token(Fold *fold, PyObject *host, PyObject *pid, long long *token, PyObject **value) {
    PyObject *key = PyTuple_Pack(3, fold->rank_key, host, pid);
    if (!key)
        return -1;
    PyObject *v = PyDict_GetItemWithError(fold->shadow, key);
    Py_DECREF(key);
    if (!v)
        return PyErr_Occurred() ? -1 : 0;
    if (!PyLong_CheckExact(v))
        return 0;
    int overflow = 0;
    *token = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (*token == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    *value = v;
    return 1;
}

/* The memo key (payload, level, members) of a framed line: new reference, or NULL with an exception. */
static PyObject *memo_key(const unsigned char *raw, PCRE2_SIZE *ov, Py_ssize_t cut, Py_ssize_t size, PyObject *members) {
    PyObject *payload = PyBytes_FromStringAndSize((const char *)raw + cut, size - cut);
    PyObject *level_b = level_bytes((const char *)raw + G_START(ov, 10), G_END(ov, 10) - G_START(ov, 10));
    PyObject *key = (payload && level_b) ? PyTuple_Pack(3, payload, level_b, members) : NULL;
    Py_XDECREF(payload);
    Py_XDECREF(level_b);
    return key;
}

/* digest(block, lines, frame, scanner, folder, slow) -> [(start, record)]
 *
 * lines: [(start, stop, members)] from an engine (digest_lines: or ``it``, the lines of a scan by Hs.digest,
 * with ``lines`` NULL). scanner: the Scanner (its _bytes_memo, _hosts and
 * _resolve). folder: a Folder or None. slow(start, stop, members) -> record or None: the Python path
 * for a line the common NCCL prefix does not frame (it folds or not itself). */
static PyObject *digest_lines(Py_buffer *bufp, PyObject *lines, HitLines *it, PyObject *capsule, PyObject *scanner,
                              PyObject *folder, PyObject *slow) {
    const unsigned char *s = bufp->buf;
    Py_ssize_t n = bufp->len;
    PyObject *held_members = NULL; /* the member set of the line in hand, from ``it`` */
    PyObject *out = NULL, *memo = NULL, *hosts = NULL, *resolve = NULL, *nccl = NULL;
    PyObject *confirmers = NULL, *by_matches = NULL, *last_host_b = NULL;
    Answers *answers = NULL, *keys = NULL;
    MemberIds mi = {0};
    Fold fold = {0};
    FoldCache *cache = NULL;
    Py_ssize_t epoch = 0, known_at = -1; /* fold.forgot when inherited_known was read (-1: not yet) */
    int inherited_known = 0;
    Regex *f = regex_of(capsule);
    if (!f)
        goto done;
    nccl = PyUnicode_InternFromString("nccl");
    memo = get_attr(scanner, "_bytes_memo");
    hosts = get_attr(scanner, "_hosts");
    resolve = get_attr(scanner, "_resolve");
    confirmers = get_attr(scanner, "_confirmers");
    by_matches = get_attr(scanner, "_by_matches");
    answers = (Answers *)get_attr(scanner, "_answers");
    keys = (Answers *)get_attr(scanner, "_memo_keys");
    if (!nccl || !memo || !hosts || !resolve || !confirmers || !by_matches || !PyDict_Check(memo) ||
        !PyDict_Check(hosts) || !PyList_Check(confirmers) || !PyDict_Check(by_matches) || !answers ||
        !PyObject_TypeCheck((PyObject *)answers, &AnswersType) || !keys ||
        !PyObject_TypeCheck((PyObject *)keys, &AnswersType))
        goto bad_state;
    if (keys_sync(keys, memo, NULL) < 0)
        goto fail;
    if (folder != Py_None && fold_init(&fold, folder) < 0)
        goto bad_state;
    if (fold.keep) {
        if (!(cache = fold_cache_of(&fold)))
            goto fail;
        cache->forgot = fold.forgot;
        epoch = cache->epoch;
    }
    out = PyList_New(0);
    if (!out)
        goto done;
    Py_ssize_t count = lines ? PyList_GET_SIZE(lines) : 0;
    for (Py_ssize_t li = 0;; li++) {
        Py_ssize_t start, stop;
        PyObject *members;
        if (lines) {
            if (li >= count)
                break;
            PyObject *line = PyList_GET_ITEM(lines, li);
            if (!PyTuple_Check(line) || PyTuple_GET_SIZE(line) != 3) {
                PyErr_SetString(PyExc_TypeError, "a candidate line is (start, stop, members)");
                goto fail;
            }
            start = PyLong_AsSsize_t(PyTuple_GET_ITEM(line, 0));
            stop = PyLong_AsSsize_t(PyTuple_GET_ITEM(line, 1));
            members = PyTuple_GET_ITEM(line, 2);
            if ((start == -1 || stop == -1) && PyErr_Occurred())
                goto fail;
        } else {
            Py_CLEAR(held_members);
            int r = hit_lines_next(it, &start, &stop, &held_members);
            if (r < 0)
                goto fail;
            if (r == 0)
                break;
            members = held_members;
        }
        if (start < 0 || stop < start || stop > n) {
            PyErr_SetString(PyExc_ValueError, "candidate line outside the block");
            goto fail;
        }
        const unsigned char *raw = s + start;
        Py_ssize_t size = stop - start;
        int rc = -1;
        PCRE2_SIZE fast_ov[2 * (FRAME_GROUPS + 1)], *ov = fast_ov;
        if (is_plain_ascii(raw, size) && !(f->fast && (rc = frame_fast(raw, size, fast_ov)))) {
            rc = regex_run(f, raw, size);
            ov = pcre2_get_ovector_pointer(f->md);
        }
        if (rc < 0) {
            /* no match (or a PCRE2 failure, never seen on this pattern): the Python path reads the line */
            Py_ssize_t seen_before = fold.seen ? PySet_GET_SIZE(fold.seen) : 0;
            PyObject *record = PyObject_CallFunction(slow, "nnO", start, stop, members);
            if (!record)
                goto fail;
            if (fold.seen && (PySet_GET_SIZE(fold.seen) < seen_before || PySet_GET_SIZE(fold.seen) <= 1))
                fold.forgot++; /* its fold may have forgotten the memory (then it holds at most this line) */
            if (record != Py_None) {
                PyObject *item = Py_BuildValue("(nN)", start, record);
                if (!item || PyList_Append(out, item) < 0) {
                    Py_XDECREF(item);
                    goto fail;
                }
                Py_DECREF(item);
            } else {
                Py_DECREF(record);
            }
            continue;
        }
        Py_ssize_t cut = (Py_ssize_t)G_END(ov, 0);
        if (cut > size || !(10 < rc) || !G_SET(ov, 5) || !G_SET(ov, 6) || !G_SET(ov, 10)) {
            PyErr_SetString(PyExc_RuntimeError, "frame pattern matched without host, pid or level");
            goto fail;
        }
        /* memo key: (payload, level, members), as digest_block builds it. Made only when the memo may
         * hold it: most lines of a dense log (channel lines of other ranks, new comm pointers) miss the
         * memo and are answered by their matches below, and the memo's key set (keys_sync) says so
         * without a bytes object, a tuple and a SipHash of the payload. */
        Ser kser;
        if (memo_key_ser(&kser, members, raw + G_START(ov, 10), G_END(ov, 10) - G_START(ov, 10), raw + cut,
                         size - cut) < 0)
            goto fail;
        PyObject *key = NULL, *known = NULL;
        if (keys_maybe(keys, &kser)) {
            if (!(key = memo_key(raw, ov, cut, size, members)))
                goto fail;
            known = PyDict_GetItemWithError(memo, key); /* borrowed */
        }
        if (known) {
            Py_INCREF(known);
        } else if (PyErr_Occurred()) {
            Py_XDECREF(key);
            goto fail;
        } else {
            /* Not in the memo: confirmed here when PCRE2 can, and then usually known by its matches
             * (channel lines differ in their ranks, not in what they capture): first in the core's
             * own answers, without a Python object, then in the scanner's _by_matches. */
            const unsigned char *lvl = raw + G_START(ov, 10);
            Py_ssize_t lvl_len = G_END(ov, 10) - G_START(ov, 10);
            PyObject *mkey = NULL;
            Ser ser;
            ser.len = 0;
            ser.overflow = 0;
            if (member_ids(&mi, members, PyList_GET_SIZE(confirmers)) < 0) {
                Py_XDECREF(key);
                goto fail;
            }
            PyObject *quick = confirm(confirmers, &mi, raw + cut, size - cut, lvl, lvl_len, &ser, 0);
            if (!quick && PyErr_Occurred()) {
                Py_XDECREF(key);
                goto fail;
            }
            if (quick) {
                Py_DECREF(quick);
                known = answers_get(answers, &ser);
                if (known) {
                    Py_INCREF(known);
                } else {
                    mkey = confirm(confirmers, &mi, raw + cut, size - cut, lvl, lvl_len, NULL, 1);
                    if (!mkey && PyErr_Occurred()) {
                        Py_XDECREF(key);
                        goto fail;
                    }
                }
            }
            if (mkey) {
                known = PyDict_GetItemWithError(by_matches, mkey);
                if (known) {
                    Py_INCREF(known);
                    if (answers_put(answers, &ser, known) < 0) {
                        Py_DECREF(known);
                        Py_DECREF(mkey);
                        Py_XDECREF(key);
                        goto fail;
                    }
                } else if (PyErr_Occurred()) {
                    Py_DECREF(mkey);
                    Py_XDECREF(key);
                    goto fail;
                }
            }
            if (!known && !key && !(key = memo_key(raw, ov, cut, size, members))) {
                Py_XDECREF(mkey);
                goto fail;
            }
            if (!known) {
                known = PyObject_CallFunction(resolve, "OnO", key, size - cut, mkey ? mkey : Py_None);
                if (known) { /* resolving may turn the memo's generation over */
                    Py_DECREF(memo);
                    memo = get_attr(scanner, "_bytes_memo");
                    if (!memo || !PyDict_Check(memo)) {
                        Py_XDECREF(mkey);
                        Py_XDECREF(key);
                        Py_DECREF(known);
                        goto bad_state;
                    }
                    if (keys_sync(keys, memo, key) < 0) {
                        Py_XDECREF(mkey);
                        Py_XDECREF(key);
                        Py_DECREF(known);
                        goto fail;
                    }
                }
            }
            Py_XDECREF(mkey);
        }
        Py_XDECREF(key);
        if (!known)
            goto fail;
        if (!PyTuple_Check(known) || PyTuple_GET_SIZE(known) != 2) {
            Py_DECREF(known);
            goto bad_state;
        }
        /* host: one str per distinct host name */
        const char *host_at = (const char *)raw + G_START(ov, 5);
        Py_ssize_t host_len = G_END(ov, 5) - G_START(ov, 5);
        PyObject *host_b;
        if (last_host_b && PyBytes_GET_SIZE(last_host_b) == host_len &&
            memcmp(PyBytes_AS_STRING(last_host_b), host_at, host_len) == 0) {
            host_b = last_host_b; /* a process prints its lines in runs: the host of the line before */
            Py_INCREF(host_b);
        } else {
            host_b = PyBytes_FromStringAndSize(host_at, host_len);
            Py_XSETREF(last_host_b, host_b);
            Py_XINCREF(host_b);
        }
        if (!host_b) {
            Py_DECREF(known);
            goto fail;
        }
        PyObject *host = PyDict_GetItemWithError(hosts, host_b);
        if (host) {
            Py_INCREF(host);
        } else if (!PyErr_Occurred()) {
            host = PyUnicode_DecodeASCII(PyBytes_AS_STRING(host_b), PyBytes_GET_SIZE(host_b), NULL);
            if (host && PyDict_SetItem(hosts, host_b, host) < 0)
                Py_CLEAR(host);
        }
        Py_DECREF(host_b);
        /* The pid is made only when Python is asked or the line ships (a fold does not need it), unless
         * it is too long for a machine integer: then now, so that int()'s limit on digits raises where
         * the Python path raises. */
        PyObject *pid = NULL;
        if (host && G_END(ov, 6) - G_START(ov, 6) > 18 && !(pid = group_int(raw, ov, rc, 6)))
            Py_CLEAR(host);
        PyObject *rank = host ? group_int(raw, ov, rc, 2) : NULL;
        if (!rank) {
            Py_XDECREF(host);
            Py_XDECREF(pid);
            Py_DECREF(known);
            goto fail;
        }
        int ship = 1;
        if (fold.keep) {
            PyObject *desc = PyTuple_GET_ITEM(known, 1);
            long long token = 0;
            int has_token = 0, found = 0, cached = fold_cache_key(desc, rank, &token, &has_token);
            Py_ssize_t slot = -1;
            PyObject *tried = rank; /* the token try_fold reads: the line's rank, or the one the shadow gives */
            if (cached == 2) {
                /* A rule match on a line without a rank of its own: keyed by the rank the folder's shadow
                 * gives its process (try_fold's token, read the same way), when it gives one. */
                if (!pid && !(pid = group_int(raw, ov, rc, 6)))
                    goto fail_line;
                cached = shadow_token(&fold, host, pid, &token, &tried);
                if (cached < 0)
                    goto fail_line;
                has_token = 1;
                if (!cached) {
                    tried = rank;
                    /* No rank for the process: its token is None while the folder has seen the job from
                     * its start (rank_token), read once per call and again whenever it may have forgotten */
                    if (known_at != fold.forgot) {
                        PyObject *k = PyObject_GetAttrString(folder, "_inherited_known");
                        inherited_known = k ? PyObject_IsTrue(k) : -1;
                        Py_XDECREF(k);
                        if (inherited_known < 0)
                            goto fail_line;
                        known_at = fold.forgot;
                    }
                    if (inherited_known)
                        cached = 1, token = 0, has_token = 0;
                }
            }
            if (cached) {
                if (cache->forgot != fold.forgot) {
                    if (fold_cache_flush(cache, &fold) < 0)
                        goto fail_line;
                    fold_cache_clear(cache);
                    cache->forgot = fold.forgot;
                }
                slot = fold_slot(cache, host, desc, token, has_token, &found);
                if (found) { /* folded before, and nothing it depends on changed since */
                    if (cache->slots[slot].count == UINT32_MAX && fold_cache_flush(cache, &fold) < 0)
                        goto fail_line;
                    cache->slots[slot].count++;
                    Py_DECREF(host), Py_XDECREF(pid), Py_DECREF(rank), Py_DECREF(known);
                    continue;
                }
            }
            if (rank == Py_None && !pid && !(pid = group_int(raw, ov, rc, 6)))
                goto fail_line; /* the rank token of a rule match reads the process's rank */
            /* with the shadow's rank as the token, try_fold builds the key it would build reading it itself */
            int folded_here = try_fold(&fold, host, tried, pid, nccl, desc);
            if (folded_here < 0)
                goto fail_line;
            if (folded_here && slot >= 0 && cache->used < FOLD_SLOTS / 2) {
                FoldHit *e = &cache->slots[slot];
                Py_INCREF(host), Py_INCREF(desc);
                e->host = host, e->desc = desc, e->token = token, e->has_token = has_token, e->count = 0;
                cache->order[cache->used++] = slot;
            }
            if (folded_here) {
                ship = 0;
            } else {
                if (!pid && !(pid = group_int(raw, ov, rc, 6)))
                    goto fail_line;
                int kept = keep_in_c(&fold, host, rank, pid, nccl, desc);
                if (kept < 0)
                    goto fail_line;
                if (kept == 2) { /* not a line keep_in_c decides: Python does */
                    Py_ssize_t seen_before = PySet_GET_SIZE(fold.seen);
                    PyObject *keep = PyObject_CallFunctionObjArgs(fold.keep, host, pid, rank, nccl, desc, NULL);
                    if (!keep)
                        goto fail_line;
                    if (PySet_GET_SIZE(fold.seen) < seen_before || PySet_GET_SIZE(fold.seen) <= 1)
                        fold.forgot++;
                    ship = PyObject_IsTrue(keep);
                    Py_DECREF(keep);
                    if (ship < 0)
                        goto fail_line;
                } else {
                    ship = kept == 0;
                }
            }
        }
        if (ship && !pid && !(pid = group_int(raw, ov, rc, 6)))
            goto fail_line;
        if (ship) {
            /* (0, text, cut, host, pid, rank, local, task, level, ts, "nccl", matches), built directly (no
             * format string parsed per shipped line) */
            PyObject *fields[12] = {
                PyLong_FromLong(0), PyUnicode_DecodeASCII((const char *)raw, size, NULL), PyLong_FromSsize_t(cut),
                Py_NewRef(host), Py_NewRef(pid), Py_NewRef(rank), group_int(raw, ov, rc, 3), group_int(raw, ov, rc, 1),
                group_str(raw, ov, rc, 10), group_str(raw, ov, rc, 4), Py_NewRef(nccl), Py_NewRef(PyTuple_GET_ITEM(known, 0)),
            };
            PyObject *record = tuple_steal(12, fields), *item = NULL;
            if (record) {
                PyObject *pair[2] = {PyLong_FromSsize_t(start), record};
                item = tuple_steal(2, pair);
            }
            if (!item || PyList_Append(out, item) < 0) {
                Py_XDECREF(item);
                goto fail_line;
            }
            Py_DECREF(item);
        }
        Py_DECREF(host), Py_XDECREF(pid), Py_DECREF(rank), Py_DECREF(known);
        continue;
    fail_line:
        Py_DECREF(host), Py_XDECREF(pid), Py_DECREF(rank), Py_DECREF(known);
        goto fail;
    }
    if (cache) {
        if (fold_cache_flush(cache, &fold) < 0)
            goto fail;
        /* Python called during the call may have forgotten the memory (the checks above catch it by the
         * seen lines' count; the epoch says it for sure) */
        Py_ssize_t now = get_ssize(folder, "_epoch");
        if (now == -1 && PyErr_Occurred())
            goto fail;
        if (now != epoch || cache->forgot != fold.forgot) {
            fold_cache_clear(cache);
            cache->epoch = -1;
        }
    }
    goto done;
bad_state:
    if (!PyErr_Occurred())
        PyErr_SetString(PyExc_TypeError, "scanner or folder state is not what the core expects");
fail:
    Py_CLEAR(out);
done:
    if (cache) {
        if (!out) { /* after an error the held counts are dropped with the entries */
            fold_cache_clear(cache);
            cache->epoch = -1;
        }
        Py_DECREF(cache);
    }
    Py_XDECREF(confirmers);
    Py_XDECREF(by_matches);
    Py_XDECREF((PyObject *)answers);
    Py_XDECREF((PyObject *)keys);
    Py_XDECREF(mi.members);
    Py_XDECREF(last_host_b);
    Py_XDECREF(memo);
    Py_XDECREF(hosts);
    Py_XDECREF(resolve);
    Py_XDECREF(nccl);
    Py_XDECREF(held_members);
    fold_release(&fold);
    return out;
}

/* digest(block, lines, frame, scanner, folder, slow) -> [(start, record)]: digest_lines of a list of lines. */
static PyObject *core_digest(PyObject *self, PyObject *args) {
    Py_buffer buf;
    PyObject *lines, *capsule, *scanner, *folder, *slow;
    if (!PyArg_ParseTuple(args, "y*O!OOOO", &buf, &PyList_Type, &lines, &capsule, &scanner, &folder, &slow))
        return NULL;
    PyObject *out = digest_lines(&buf, lines, NULL, capsule, scanner, folder, slow);
    PyBuffer_Release(&buf);
    return out;
}


/* --- line numbers --------------------------------------------------------------------------- */

/* The line feeds in [from, to), with memchr. */
static Py_ssize_t line_feeds(const char *p, const char *end) {
    Py_ssize_t seen = 0;
    while ((p = memchr(p, '\n', end - p)) != NULL) {
        seen++;
        p++;
    }
    return seen;
}

/* Move *pos to the next start (an int of Python, ascending inside the n bytes of s), adding the line
 * feeds passed to *seen: the shared step of count_newlines and number. -1 with an exception when the
 * start is not an int or does not ascend inside the block. */
static int feeds_to(const char *s, Py_ssize_t n, PyObject *start_obj, Py_ssize_t *pos, Py_ssize_t *seen) {
    Py_ssize_t start = PyLong_AsSsize_t(start_obj);
    if (start == -1 && PyErr_Occurred())
        return -1;
    if (start < *pos || start > n) {
        PyErr_SetString(PyExc_ValueError, "starts must ascend inside the block");
        return -1;
    }
    *seen += line_feeds(s + *pos, s + start);
    *pos = start;
    return 0;
}

/* count_newlines(block, starts) -> ([\n before each start], \n in the block): diag.input.lines. */
static PyObject *core_count_newlines(PyObject *self, PyObject *args) {
    Py_buffer buf;
    PyObject *starts;
    if (!PyArg_ParseTuple(args, "y*O!", &buf, &PyList_Type, &starts))
        return NULL;
    const char *s = buf.buf;
    Py_ssize_t n = buf.len, pos = 0, seen = 0, count = PyList_GET_SIZE(starts);
    PyObject *out = PyList_New(count);
    if (!out)
        goto done;
    for (Py_ssize_t i = 0; i < count; i++) {
        if (feeds_to(s, n, PyList_GET_ITEM(starts, i), &pos, &seen) < 0)
            goto fail;
        PyObject *v = PyLong_FromSsize_t(seen);
        if (!v)
            goto fail;
        PyList_SET_ITEM(out, i, v);
    }
    seen += line_feeds(s + pos, s + n);
    {
        PyObject *pair = Py_BuildValue("(Nn)", out, seen);
        PyBuffer_Release(&buf);
        return pair;
    }
fail:
    Py_CLEAR(out);
done:
    PyBuffer_Release(&buf);
    return NULL;
}


/* number(block, shipped, line_no) -> ([record numbered], \n in the block): diag.scan.scanner.Scanner.
 * digest_source's numbering: each (start, record) of ``shipped`` (ascending starts) becomes the record
 * with its first item replaced by line_no + the line feeds before start + 1. */
static PyObject *core_number(PyObject *self, PyObject *args) {
    Py_buffer buf;
    PyObject *shipped, *line_no;
    if (!PyArg_ParseTuple(args, "y*O!O", &buf, &PyList_Type, &shipped, &line_no))
        return NULL;
    const char *s = buf.buf;
    Py_ssize_t n = buf.len, pos = 0, seen = 0, count = PyList_GET_SIZE(shipped);
    PyObject *out = PyList_New(count), *base = PyNumber_Add(line_no, one);
    if (!out || !base)
        goto fail;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = PyList_GET_ITEM(shipped, i), *record;
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2 || !PyTuple_Check(record = PyTuple_GET_ITEM(item, 1)) ||
            PyTuple_GET_SIZE(record) < 1) {
            PyErr_SetString(PyExc_TypeError, "shipped lines are (start, record)");
            goto fail;
        }
        if (feeds_to(s, n, PyTuple_GET_ITEM(item, 0), &pos, &seen) < 0)
            goto fail;
        Py_ssize_t size = PyTuple_GET_SIZE(record);
        PyObject *numbered = PyTuple_New(size), *by = PyLong_FromSsize_t(seen);
        PyObject *at = by ? PyNumber_Add(base, by) : NULL;
        Py_XDECREF(by);
        if (!numbered || !at) {
            Py_XDECREF(numbered);
            Py_XDECREF(at);
            goto fail;
        }
        PyTuple_SET_ITEM(numbered, 0, at);
        for (Py_ssize_t k = 1; k < size; k++) {
            PyObject *v = PyTuple_GET_ITEM(record, k);
            Py_INCREF(v);
            PyTuple_SET_ITEM(numbered, k, v);
        }
        PyList_SET_ITEM(out, i, numbered);
    }
    seen += line_feeds(s + pos, s + n);
    Py_DECREF(base);
    PyBuffer_Release(&buf);
    return Py_BuildValue("(Nn)", out, seen);
fail:
    Py_XDECREF(out);
    Py_XDECREF(base);
    PyBuffer_Release(&buf);
    return NULL;
}

static PyMethodDef methods[] = {
    {"lines", core_lines, METH_VARARGS, "Candidate lines of Hyperscan match ends (see diag.scan.core)."},
    {"compile", core_compile, METH_VARARGS, "Compile a pattern with PCRE2 (JIT): compile(pattern, anchored)."},
    {"match", core_match, METH_VARARGS, "Spans of a compiled pattern's match on a subject, or None (tests)."},
    {"frame_fast", core_frame_fast, METH_VARARGS, "The common NCCL prefix read without PCRE2, or None (tests)."},
    {"frame_is_fast", core_frame_is_fast, METH_O, "Whether a compiled frame pattern is read by frame_fast (tests)."},
    {"count_newlines", core_count_newlines, METH_VARARGS, "Line feeds before each start and in the block."},
    {"number", core_number, METH_VARARGS, "Shipped records numbered by the line feeds before each."},
    {"digest", core_digest, METH_VARARGS, "Scanner.digest_block over a block's candidate lines."},
    {"condense", core_condense, METH_VARARGS, "diag.scan.runs.condense in C."},
    {"apply", core_apply, METH_VARARGS, "Scanner.apply's loop, communicator lines applied in C."},
#ifdef SLURMDIAG_HS
    {"hs_compile", core_hs_compile, METH_VARARGS, "A Hyperscan database of expressions (bytes), scanned from C."},
    {"hs_load", core_hs_load, METH_VARARGS, "hs_load(serialized, expression count): a database Hs.serialize wrote."},
    {"hs_version", core_hs_version, METH_NOARGS, "The libhs version the core runs."},
#endif
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_core", NULL, -1, methods};

PyMODINIT_FUNC PyInit__core(void) {
    one = PyLong_FromLong(1);
    if (!one)
        return NULL;
    for (int i = 0; i < 5; i++)
        if (!(levels[i] = PyBytes_FromString(level_names[i])))
            return NULL;
    struct {
        PyObject **at;
        const char *text;
    } names[] = {{&s_nccl_info, "nccl_info"}, {&s_slurm_messages, "slurm_messages"}, {&s_max_nranks, "max_nranks"},
                 {&s_ranks, "ranks"}, {&s_samples, "samples"}, {&s_count, "count"}, {&s_hosts, "hosts"},
                 {&s_captures, "captures"}, {&s_rank, "rank"}, {&s_nranks, "nranks"}, {&s_host, "host"},
                 {&s_rank_of_process, "rank_of_process"}, {&s_host_of_rank, "host_of_rank"}, {&u_nccl, "nccl"},
                 {&u_info, "INFO"}, {&u_slurm, "slurm"}, {&s_var, "var"}, {&s_value, "value"}, {&s_env, "env"},
                 {&u_env_echo, "env_echo"}, {&u_hca_echo, "hca_echo"}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (!(*names[i].at = PyUnicode_InternFromString(names[i].text)))
            return NULL;
    if (PyType_Ready(&CollectorType) < 0 || PyType_Ready(&KeeperType) < 0 || PyType_Ready(&AnswersType) < 0 ||
        PyType_Ready(&FoldCacheType) < 0)
        return NULL;
#ifdef SLURMDIAG_HS
    if (PyType_Ready(&HsType) < 0)
        return NULL;
#endif
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    Py_INCREF(&CollectorType);
    if (PyModule_AddObject(m, "Collector", (PyObject *)&CollectorType) < 0) {
        Py_DECREF(&CollectorType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&AnswersType);
    if (PyModule_AddObject(m, "Answers", (PyObject *)&AnswersType) < 0) {
        Py_DECREF(&AnswersType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&KeeperType);
    if (PyModule_AddObject(m, "Keeper", (PyObject *)&KeeperType) < 0) {
        Py_DECREF(&KeeperType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&FoldCacheType);
    if (PyModule_AddObject(m, "FoldCache", (PyObject *)&FoldCacheType) < 0) {
        Py_DECREF(&FoldCacheType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
