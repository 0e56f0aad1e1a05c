/*
 * One complete chunk of `pdftotext -bbox-layout` output read in a single C pass.
 *
 * Why C: after the columnar reader (pdftext/columns.py) the Python side of an extraction
 * still cost ~0.1 of Poppler's own CPU time (four regex passes over the chunk, an Arrow
 * cast, NumPy clamps, then a list of ids per column); here one pass over the bytes builds
 * the same columns, and the reading costs ~1% of Poppler (docs/performance.md).
 *
 * What it accepts is deliberately narrower than what the Python readers accept: Poppler's
 * regular shape only (`<word xMin="N" yMin="N" xMax="N" yMax="N">TEXT</word>`, `<page
 * width="N" height="N">`, plain decimal numbers of at most 19 digits). Anything else makes
 * `read_chunk` return None and the Python readers take the chunk, so on every input the
 * result is the one pdftext/parse.py defines (tests/test_extract.py checks them equal).
 *
 * Numbers: a decimal m / 10^k with m <= 2^53 and k <= 22 is one IEEE division of two exact
 * doubles, which is correctly rounded (Clinger's fast path), so it equals Python's float()
 * and Arrow's cast of the same text, to the last bit; anything longer goes to Python.
 * The clamps use NumPy's comparisons (a >= b ? a : b), which keep -0.0 as NumPy does.
 *
 * Rotated pages: Poppler prints a page's unrotated size but its words in the displayed
 * (rotated) frame, so a page whose printed size is the displayed size (`display`, pdfium's)
 * swapped is clamped to the swapped size: `displayed_size` is pdftext/parse.py's
 * `BBoxLayoutParser._displayed`, to the same comparisons (docs/rotation.md).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

static const double POW10[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Bytes a word may hold and pass through the documented rule unchanged: printable ASCII
 * but the space, and no '&' (an entity to unescape). Others go to Python's rule. */
static unsigned char PLAIN[256];

typedef struct {
    const char *p, *end;
} Cursor;

static int take(Cursor *c, const char *lit, size_t n)
{
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, lit, n) != 0)
        return 0;
    c->p += n;
    return 1;
}

/* A plain decimal up to the closing quote: -?[0-9]+(\.[0-9]+)? ; 0 when not one. */
static int number(Cursor *c, double *out)
{
    const char *p = c->p, *end = c->end;
    int neg = 0, digits = 0, frac = 0;
    uint64_t m = 0;
    if (p < end && *p == '-') {
        neg = 1;
        p++;
    }
    while (p < end && *p >= '0' && *p <= '9') {
        if (++digits > 19)
            return 0;
        m = m * 10 + (uint64_t)(*p++ - '0');
    }
    if (digits == 0)
        return 0;
    if (p < end && *p == '.') {
        p++;
        while (p < end && *p >= '0' && *p <= '9') {
            if (++digits > 19)
                return 0;
            m = m * 10 + (uint64_t)(*p++ - '0');
            frac++;
        }
        if (frac == 0)
            return 0;
    }
    if (p >= end || *p != '"' || m > ((uint64_t)1 << 53) || frac > 22)
        return 0;
    double v = (double)m / POW10[frac];
    *out = neg ? -v : v;
    c->p = p + 1; /* past the quote */
    return 1;
}

static double np_max(double a, double b) { return a >= b ? a : b; }
static double np_min(double a, double b) { return a <= b ? a : b; }

typedef struct {
    PyObject *words, *odd, *pages, *lines, *blocks, *sizes;
    PyObject *boxes; /* bytearray of n x 4 float64 */
    Py_ssize_t n, cap;
    long page, line, block;
    double w, h;
    const void *display; /* displayed width, height of pages 1..ndisplay (NaN: unknown) */
    Py_ssize_t ndisplay;
} Out;

/* the tolerance of pdftext/parse.py's DISPLAY_TOLERANCE (pdfium's sizes are float32) */
#define DISPLAY_TOLERANCE 0.01

static int near(double a, double b) { return fabs(a - b) <= DISPLAY_TOLERANCE; }

/* The size page `number` is clamped to: Poppler's printed one, swapped when the displayed
 * page is that size turned a quarter (and not the printed size itself: a square page). */
static void displayed_size(const Out *o, long number, double *w, double *h)
{
    if (number < 1 || number > o->ndisplay)
        return;
    double d[2]; /* copied: the buffer need not be aligned for doubles */
    memcpy(d, (const char *)o->display + 2 * (size_t)(number - 1) * sizeof(double), sizeof d);
    double dw = d[0], dh = d[1];
    if (near(*w, dh) && near(*h, dw) && !(near(*w, dw) && near(*h, dh))) {
        double t = *w;
        *w = *h;
        *h = t;
    }
}

static int grow_boxes(Out *o)
{
    Py_ssize_t cap = o->cap ? 2 * o->cap : 4096;
    if (PyByteArray_Resize(o->boxes, cap * 4 * (Py_ssize_t)sizeof(double)) < 0)
        return 0;
    o->cap = cap;
    return 1;
}

static int append_long(PyObject *list, long v)
{
    PyObject *x = PyLong_FromLong(v);
    if (x == NULL)
        return 0;
    int rc = PyList_Append(list, x);
    Py_DECREF(x);
    return rc == 0;
}

static PyObject *word_text(const char *s, Py_ssize_t n, int *plain)
{
    *plain = n > 0;
    for (Py_ssize_t i = 0; i < n && *plain; i++)
        *plain = PLAIN[(unsigned char)s[i]];
    if (!*plain)
        return PyBytes_FromStringAndSize(s, n);
    PyObject *u = PyUnicode_New(n, 127);
    if (u != NULL)
        memcpy(PyUnicode_1BYTE_DATA(u), s, (size_t)n);
    return u;
}

/* 1: a word read and added; 0: not in Poppler's shape; -1: a Python error. */
static int read_word(Cursor *c, Out *o)
{
    double v[4];
    static const char *ATTR[4] = {"xMin=\"", "\" yMin=\"", "\" xMax=\"", "\" yMax=\""};
    static const size_t LEN[4] = {6, 8, 8, 8};
    for (int i = 0; i < 4; i++) {
        /* number() consumed the closing quote: the next literal starts after it */
        const char *lit = i ? ATTR[i] + 1 : ATTR[0];
        if (!take(c, lit, i ? LEN[i] - 1 : LEN[0]) || !number(c, &v[i]))
            return 0;
    }
    if (!take(c, ">", 1))
        return 0;
    const char *lt = memchr(c->p, '<', (size_t)(c->end - c->p));
    if (lt == NULL || (size_t)(c->end - lt) < 7 || memcmp(lt, "</word>", 7) != 0)
        return 0;
    int plain;
    PyObject *t = word_text(c->p, lt - c->p, &plain);
    if (t == NULL || PyList_Append(o->words, t) < 0) {
        Py_XDECREF(t);
        return -1;
    }
    Py_DECREF(t);
    if (!plain && !append_long(o->odd, (long)o->n))
        return -1;
    if (o->n == o->cap && !grow_boxes(o))
        return -1;
    double *b = (double *)PyByteArray_AS_STRING(o->boxes) + 4 * o->n;
    b[0] = np_min(np_max(np_min(v[0], v[2]), 0.0), o->w);
    b[1] = np_min(np_max(np_min(v[1], v[3]), 0.0), o->h);
    b[2] = np_min(np_max(np_max(v[0], v[2]), 0.0), o->w);
    b[3] = np_min(np_max(np_max(v[1], v[3]), 0.0), o->h);
    o->n++;
    if (!append_long(o->pages, o->page) || !append_long(o->lines, o->line)
        || !append_long(o->blocks, o->block))
        return -1;
    c->p = lt + 7;
    return 1;
}

static int read_page(Cursor *c, Out *o)
{
    double w, h;
    if (!take(c, "width=\"", 7) || !number(c, &w) || !take(c, " height=\"", 9)
        || !number(c, &h) || !take(c, ">", 1))
        return 0;
    PyObject *size = Py_BuildValue("(dd)", w, h);
    if (size == NULL || PyList_Append(o->sizes, size) < 0) {
        Py_XDECREF(size);
        return -1;
    }
    Py_DECREF(size);
    o->page++;
    displayed_size(o, o->page, &w, &h);
    o->w = w;
    o->h = h;
    return 1;
}

static int scan(Cursor *c, Out *o)
{
    for (;;) {
        const char *lt = memchr(c->p, '<', (size_t)(c->end - c->p));
        if (lt == NULL)
            return 1;
        c->p = lt + 1;
        int rc = 1;
        if (take(c, "word ", 5))
            rc = read_word(c, o);
        else if (take(c, "line ", 5))
            o->line++;
        else if (take(c, "block ", 6))
            o->block++;
        else if (take(c, "page ", 5))
            rc = read_page(c, o);
        if (rc != 1)
            return rc;
    }
}

PyDoc_STRVAR(read_chunk_doc,
"read_chunk(data, page, line, block, width, height, display=None)\n"
"--\n\n"
"Read a complete chunk of Poppler's -bbox-layout output, continuing the document's\n"
"running page, line and block ids and the open page's (clamping) size. `display`: the\n"
"displayed width and height of each page as float64 pairs (a buffer), or None; a page\n"
"printed as its displayed size swapped is clamped to that. Returns None when the chunk\n"
"is not in Poppler's regular shape, else (words, odd, boxes, pages, lines, blocks,\n"
"page_sizes (as printed), line, block): words are str where the documented rule leaves\n"
"the text as\n"
"it is, else the raw bytes, whose indices are listed in odd; boxes is a bytearray of\n"
"n x 4 float64 clamped to the page; pages, lines and blocks the ids of each word.");

static PyObject *read_chunk(PyObject *self, PyObject *args)
{
    Py_buffer data, display = {0};
    Out o = {0};
    if (!PyArg_ParseTuple(args, "y*llldd|z*", &data, &o.page, &o.line, &o.block, &o.w, &o.h,
                          &display))
        return NULL;
    if (display.buf != NULL) {
        o.display = display.buf;
        o.ndisplay = display.len / (Py_ssize_t)(2 * sizeof(double));
    }
    PyObject *result = NULL;
    o.words = PyList_New(0);
    o.odd = PyList_New(0);
    o.pages = PyList_New(0);
    o.lines = PyList_New(0);
    o.blocks = PyList_New(0);
    o.sizes = PyList_New(0);
    o.boxes = PyByteArray_FromStringAndSize(NULL, 0);
    if (o.words && o.odd && o.pages && o.lines && o.blocks && o.sizes && o.boxes) {
        Cursor c = {(const char *)data.buf, (const char *)data.buf + data.len};
        int rc = scan(&c, &o);
        if (rc == 1 && PyByteArray_Resize(o.boxes, o.n * 4 * (Py_ssize_t)sizeof(double)) == 0)
            result = Py_BuildValue("(OOOOOOOll)", o.words, o.odd, o.boxes, o.pages, o.lines,
                                   o.blocks, o.sizes, o.line, o.block);
        else if (rc == 0)
            result = Py_NewRef(Py_None);
    }
    Py_XDECREF(o.words);
    Py_XDECREF(o.odd);
    Py_XDECREF(o.pages);
    Py_XDECREF(o.lines);
    Py_XDECREF(o.blocks);
    Py_XDECREF(o.sizes);
    Py_XDECREF(o.boxes);
    PyBuffer_Release(&data);
    if (display.obj != NULL)
        PyBuffer_Release(&display);
    return result;
}

static PyMethodDef METHODS[] = {
    {"read_chunk", read_chunk, METH_VARARGS, read_chunk_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {
    PyModuleDef_HEAD_INIT, "_fastread",
    "Poppler's -bbox-layout chunks read in one C pass (see pdftext/parse.py).", -1, METHODS,
};

PyMODINIT_FUNC PyInit__fastread(void)
{
    for (int b = 0x21; b <= 0x7f; b++)
        PLAIN[b] = b != '&';
    return PyModule_Create(&MODULE);
}
