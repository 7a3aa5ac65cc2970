"""Word positions of a slotted page and the names of the edit cases (the "AE" layout).

A page is ``page_size`` int32 words::

    word 0            number of vertices in the page (n)
    word 1            end of the records zone (first free word)
    word 2            1 if the page belongs to a large adjacency list, else 0
    words 3 ..        records zone: per vertex, its degree word then its adjacency list,
                      in ascending vertex order
    ...               free gap (always zero)
    words .. P-1      slots zone, growing from the back: slot i is the pair
                      (P-2-2i: offset of the vertex's degree word, P-1-2i: vertex id),
                      so slot 0 (the smallest vertex) occupies the last two words

A *large adjacency list* spans ``k >= 2`` consecutive logical pages. Each of them holds
one vertex (header ``(1, end, 1)``, one slot ``(3, v)``) and a degree word at word 3; the
first page's degree word is the vertex's total degree, a continuation page's degree word is
the number of entries stored in that page. Every page but the last is full
(``LARGE_ENTRIES_PER_PAGE = P - 6`` entries), so entry ``j`` of the list lies in page
``j // (P - 6)`` of the list at word ``4 + j % (P - 6)``: a GPU thread finds any neighbour
by arithmetic.

The index has one column per logical page (rows, int32): first vertex id, position of the
page within its large list (-1 for an ordinary page), number of pages of that list (-1),
and the physical page slot (the page's words start at ``slot * page_size`` in the pool).
"""

from __future__ import annotations

HEADER_WORDS = 3
H_COUNT = 0          # number of vertices in the page
H_END = 1            # end of the records zone
H_LARGE = 2          # part of a large adjacency list
SLOT_WORDS = 2
RECORD_START = HEADER_WORDS

# Index rows
IDX_FIRST = 0        # first vertex id of the page
IDX_LPOS = 1         # position of the page within its large list, -1 for an ordinary page
IDX_LCOUNT = 2       # pages of that large list, -1 for an ordinary page
IDX_SLOT = 3         # physical page slot in the pool
INDEX_ROWS = 4

# Scalars kept in the engine's int64 ``meta`` array
M_PAGES = 0          # logical pages in use (columns of the index)
M_HIGH_WATER = 1     # physical slots ever handed out (pool words in use: M_HIGH_WATER * P)
M_FREE = 2           # freed physical slots waiting on the free stack
M_INDEX_DIRTY = 3    # the index changed since the device mirror's last sync
M_ENTRIES = 4        # adjacency entries stored
M_PAGE_SIZE = 5
M_WEIGHTED = 6
M_SELF_LOOPS = 7     # entries u -> u
META_LEN = 8

MIN_PAGE_SIZE = 16
MAX_PAGE_SIZE = 65536
PAGE_SIZE_STEP = 16
NEW_VERTEX_FREE_FRACTION = 0.6   # the thesis: a new vertex joins the last page only if >= 60 % is free

# Which rule each edit took (indices into the engine's counts array).
CASE_NAMES = (
    "add_in_place",              # room in the page: later lists shift to open a gap
    "add_move_following",        # (1) page full: the lists after the source move to a new page
    "add_move_own",              # (2) page full, source list last: it moves to a new page
    "add_become_large",          # (3) page full, source alone: it becomes a large list
    "add_large_append",          # appended to the last page of a large list
    "add_large_new_page",        # large list's last page full: a page is added to the list
    "remove_in_page",            # swap with the last entry, shrink, compact
    "remove_large",              # the same inside a large list
    "remove_free_trailing_page",  # a large list's trailing page became empty and was freed
    "remove_large_to_ordinary",  # ... leaving a single page: it is an ordinary page again
    "vertex_to_last_page",       # new vertex joins the last page (>= 60 % free)
    "vertex_new_page",           # new vertex opens a page at the end
    "vertex_restore_in_page",    # a removed id is put back into the page where it belongs
    "vertex_restore_split",      # ... that page was full: the later vertices move to a new page
    "vertex_restore_new_page",   # ... it gets a page of its own
    "vertex_remove",             # record and slot dropped, page kept
    "vertex_remove_delete_page",  # the page became empty and was deleted
    "vertex_remove_large",       # a large list's pages were all freed
)
CASE = {name: i for i, name in enumerate(CASE_NAMES)}
N_CASES = len(CASE_NAMES)

ADD_IN_PLACE = CASE["add_in_place"]
ADD_MOVE_FOLLOWING = CASE["add_move_following"]
ADD_MOVE_OWN = CASE["add_move_own"]
ADD_BECOME_LARGE = CASE["add_become_large"]
ADD_LARGE_APPEND = CASE["add_large_append"]
ADD_LARGE_NEW_PAGE = CASE["add_large_new_page"]
REMOVE_IN_PAGE = CASE["remove_in_page"]
REMOVE_LARGE = CASE["remove_large"]
REMOVE_FREE_TRAILING_PAGE = CASE["remove_free_trailing_page"]
REMOVE_LARGE_TO_ORDINARY = CASE["remove_large_to_ordinary"]
VERTEX_TO_LAST_PAGE = CASE["vertex_to_last_page"]
VERTEX_NEW_PAGE = CASE["vertex_new_page"]
VERTEX_RESTORE_IN_PAGE = CASE["vertex_restore_in_page"]
VERTEX_RESTORE_SPLIT = CASE["vertex_restore_split"]
VERTEX_RESTORE_NEW_PAGE = CASE["vertex_restore_new_page"]
VERTEX_REMOVE = CASE["vertex_remove"]
VERTEX_REMOVE_DELETE_PAGE = CASE["vertex_remove_delete_page"]
VERTEX_REMOVE_LARGE = CASE["vertex_remove_large"]


def large_entries_per_page(page_size: int) -> int:
    """Entries a full page of a large list holds: all but header, degree word and one slot."""
    return page_size - HEADER_WORDS - 1 - SLOT_WORDS


def valid_page_size(page_size) -> bool:
    return (isinstance(page_size, int) and MIN_PAGE_SIZE <= page_size <= MAX_PAGE_SIZE
            and page_size % PAGE_SIZE_STEP == 0)


PAGE_SIZE_RULE = (f"a multiple of {PAGE_SIZE_STEP} from {MIN_PAGE_SIZE} to {MAX_PAGE_SIZE} "
                  "(256..4096 for real use; tiny sizes make splits happen on small graphs)")
