"""Result views: the timing chart, the sweep heatmap, the run history, and their export."""
