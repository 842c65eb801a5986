"""Figures for papers: ``prefeval plot KIND INPUT -o FILE.png|FILE.svg|FILE.pdf``.

:mod:`.common` holds what every kind shares: the registry of kinds (:data:`PLOT_KINDS`), the request
(:class:`PlotRequest`), saving a figure (:func:`render_plot`), the styles of the runs and
matplotlib's import. Each family of figures is one module, which registers its kinds there; this
package imports them all, in the order the command line lists the kinds:

* :mod:`.preferences`: ``preferences``, the mean preference between every two runs;
* :mod:`.orderings`: ``orderings``, how the measures order the runs;
* :mod:`.sampled`: ``sampled``, exact metrics against their sampled values;
* :mod:`.null`: ``null``, observed values against random rankings;
* :mod:`.ranks`: ``ranks``, the rank intervals and tiers of ``aggregate --bootstrap``;
* :mod:`.precision_recall`: ``pr``, interpolated precision-recall curves.

A kind draws values it is given: reading its input, checking it and computing what it shows belong
to :mod:`prefeval.analyses`, beside what wrote the records (and :mod:`prefeval.io`). Adding a kind
means adding a module of this package, registering its kind with
:func:`~.common.plot_kind`, and importing it here.

Every figure is meant to go into a paper as it is: each kind picks a size for its content (the
request's ``width`` and ``height``, in inches, override it), raster images are written at ``dpi``
(:data:`DEFAULT_DPI`), legends sit outside the data, axis limits follow the data (Kendall's τ from
its smallest value to 1, not from −1), and runs are told apart by colour alone up to ten runs and by
colour and marker beyond (:func:`run_styles`), or labelled directly where they end.
``preferences``, ``orderings``, ``ranks`` and ``pr`` plot the first sample of their input.
"""

from prefeval.report.plots.common import (
    DEFAULT_DPI,
    IMAGE_FORMATS,
    INSTALL_HINT,
    PLOT_KINDS,
    PlotKind,
    PlotRequest,
    render_plot,
    run_styles,
)

# isort: off
# Each module registers its kinds as it is imported: in this order, the order of the command's list.
from prefeval.report.plots import preferences, orderings, sampled, null, ranks, precision_recall
# isort: on

__all__ = ["DEFAULT_DPI", "IMAGE_FORMATS", "INSTALL_HINT", "PLOT_KINDS", "PlotKind", "PlotRequest", "render_plot",
           "run_styles", "preferences", "orderings", "sampled", "null", "ranks", "precision_recall"]
