"""The lab's panels: ipywidgets + plotly views that call the library."""
