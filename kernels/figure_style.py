"""The one look of the pictures the command line draws with matplotlib (the sweep heatmap of
:mod:`kernels.results.heatmap_figure`, the roofline of :mod:`kernels.roofline.figure`): the rc
parameters both apply with ``matplotlib.rc_context``. A plain dict, no import: it stands below
both wings, so neither imports the other for it."""

STYLE = {
    "svg.fonttype": "path",         # text as outlines: every renderer draws the same glyphs
    "svg.hashsalt": "gpu-graph-explorer",   # stable element ids: the same table gives the same file
    "font.family": "DejaVu Sans",   # ships with matplotlib, has the star and the dashes used here
    # unhinted glyphs in the PNG, as in the SVG's outlines: hinting moves and widens text by
    # resolution, and the PNG would then differ from the SVG drawn at the same size
    "text.hinting": "no_hinting",
    "hatch.color": "#9a9a9a",
    "hatch.linewidth": 0.8,
}
