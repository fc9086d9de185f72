"""What the English figure rules share: a figure before a scale word, thousands kept."""

# a figure's thousands separators belong to it: "1,200 million" is 1,200,000,000
FIGURE_BEFORE_SCALE = r"((?<![\d.,])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)"
