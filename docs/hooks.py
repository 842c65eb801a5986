"""MkDocs hooks (``hooks:`` in mkdocs.yml): the parts of the site written by prefeval itself, at build time.

A page holds a marker, an HTML comment on a line of its own, where the generated text goes:

* ``<!-- help: COMMAND -->``: what ``prefeval COMMAND --help`` prints, run from this checkout (click
  renders it; ``ndeval`` takes ndeval's ``-help``);
* ``<!-- measures-reference -->``: every registered measure family, in ``prefeval measures``' order,
  from :func:`prefeval.measures.catalogue.measure_catalogue` and each family's docstring (its formula
  and edge cases): syntax, kind, relevance, aliases, parameters, trec_eval, ir_measures and ndeval
  names, and citation. Nothing of it is written by hand, so it cannot drift from the code.

* ``<!-- topic-pages -->``: links to the performance topic pages that exist (:data:`TOPIC_PAGES`),
  which :func:`on_config` also puts in the navigation, under Performance: pages written on other
  branches join the site when they are merged, and the site builds strictly before and after.

A marker naming an unknown command, or a help that fails, stops the build (an exception), as
``mkdocs build --strict`` stops on a warning.
"""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys

HELP = re.compile(r"^<!-- help: ([a-z_]+) -->$", re.M)
REFERENCE = "<!-- measures-reference -->"
HELP_OPTION = {"ndeval": "-help"}
"""The help option of a command whose command line is another tool's."""


TOPICS = "<!-- topic-pages -->"
TOPIC_PAGES = {
    "columnar.md": "Columnar inputs",
    "scale-out.md": "Scaling out",
    "recommender.md": "Recommender scale",
}
"""The performance topic pages (file under docs/: title in the navigation), in the navigation's order."""


def topic_pages(docs_dir: str) -> dict[str, str]:
    return {name: title for name, title in TOPIC_PAGES.items() if os.path.isfile(os.path.join(docs_dir, name))}


def on_config(config):
    """Performance becomes a section of the navigation holding its topic pages, when any exists."""
    pages = topic_pages(config["docs_dir"])
    if pages:
        for index, entry in enumerate(config["nav"]):
            if entry == {"Performance": "performance.md"}:
                config["nav"][index] = {"Performance": [{"Overview": "performance.md"},
                                                        *({title: name} for name, title in pages.items())]}
    return config


def on_page_markdown(markdown: str, page, config, files) -> str:
    markdown = HELP.sub(lambda match: command_help(match.group(1)), markdown)
    if REFERENCE in markdown:
        markdown = markdown.replace(REFERENCE, measures_reference())
    if TOPICS in markdown:
        pages = topic_pages(config["docs_dir"])
        links = "\n".join(f"* [{title}]({name})" for name, title in pages.items())
        markdown = markdown.replace(TOPICS, links or "(none yet)")
    return markdown


SPHINX_ROLE = re.compile(r":(?:func|class|meth|mod|data|attr|exc|obj):(<code>)(~)?([^<]*)</code>")


def on_page_content(html: str, page, config, files) -> str:
    """The docstrings' cross-references (Sphinx roles, which mkdocstrings leaves as they are written) as
    code: ``:func:`~prefeval.dataframes.evaluate``` shows as ``evaluate``."""
    return SPHINX_ROLE.sub(lambda match: f"<code>{_referenced(match.group(2), match.group(3))}</code>", html)


def _referenced(tilde: str | None, target: str) -> str:
    return target.rsplit(".", 1)[-1] if tilde else target


def command_help(command: str) -> str:
    """``prefeval COMMAND --help`` as a fenced block, 100 columns wide (the commands' own width), the
    program named ``prefeval`` as when it is installed."""
    environment = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}
    program = "import sys; sys.argv[0] = 'prefeval'; from prefeval.__main__ import main; main()"
    done = subprocess.run([sys.executable, "-c", program, command, HELP_OPTION.get(command, "--help")],
                          capture_output=True, text=True, env=environment, check=False)
    if done.returncode != 0 or not done.stdout.strip():
        raise RuntimeError(f"prefeval {command} --help failed: {done.stderr.strip()}")
    return f'<div class="help" markdown>\n\n```text\n{done.stdout.rstrip()}\n```\n\n</div>'


def measures_reference() -> str:
    from prefeval.measures.base import families
    from prefeval.measures.catalogue import measure_catalogue

    sections = []
    for record, family in zip(measure_catalogue(), families(), strict=True):
        sections.append(measure_section(record, inspect.getdoc(family) or ""))
    return "\n\n".join(sections)


def measure_section(record: dict, docstring: str) -> str:
    facts = [f"**{record['kind']}**, {record['relevance']} relevance", f"syntax `{record['syntax']}`"]
    if record["aliases"]:
        facts.append("aliases " + ", ".join(f"`{alias}`" for alias in record["aliases"]))
    lines = [f"### `{record['name']}`", "", f"{markdown_text(record['description'])}.", "",
             "; ".join(facts) + ".", "", docstring_markdown(docstring), ""]
    if record["parameters"]:
        lines += ["| parameter | type | default | range | meaning |", "|---|---|---|---|---|"]
        lines += [f"| `{p['name']}` | {p['type']} | `{p['default']}` | `{p['range']}` | {cell(p['meaning'])} |"
                  for p in record["parameters"]]
        lines.append("")
    foreign = [(tool, record.get(key, [])) for tool, key in
               (("trec_eval", "trec_eval"), ("ir_measures", "ir_measures"), ("ndeval", "ndeval"))]
    foreign = [(tool, names) for tool, names in foreign if names]
    if foreign:
        lines.append("Names elsewhere: " + "; ".join(
            f"{tool} " + ", ".join(f"`{name}`" for name in names) for tool, names in foreign) + ".")
        lines.append("")
    if record["citation"]:
        lines.append(f"Citation: {markdown_text(record['citation'])}.")
    return "\n".join(lines).rstrip()


def cell(text: str) -> str:
    return markdown_text(text).replace("|", "\\|")


ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")
LITERAL = re.compile(r"``(.+?)``")


def markdown_text(text: str) -> str:
    """reStructuredText prose (a docstring's) as Markdown: literals and cross-references as code, and
    every character Markdown would read as markup escaped, so that a formula shows as written."""
    pieces = []
    position = 0
    text = ROLE.sub(lambda match: f"``{match.group(1).rsplit('.', 1)[-1]}``", text)
    for match in LITERAL.finditer(text):
        pieces.append(escaped(text[position:match.start()]))
        pieces.append(f"`{match.group(1)}`")
        position = match.end()
    pieces.append(escaped(text[position:]))
    return "".join(pieces)


def escaped(text: str) -> str:
    """``text`` with Markdown's markup characters escaped (a ``<`` as an entity: Python-Markdown does
    not take ``\\<``)."""
    return re.sub(r"([\\*_\[\]>`#])", r"\\\1", text).replace("<", "&lt;")


def docstring_markdown(docstring: str) -> str:
    """A docstring's paragraphs as Markdown: prose escaped, bullets kept, and a block after ``::``
    (indented) shown as it is."""
    out = []
    literal = False
    for line in docstring.splitlines():
        if literal and (line.startswith(" ") or not line.strip()):
            out.append("    " + line if line.strip() else "")
            continue
        literal = False
        bullet = re.match(r"^(\s*)([*-]) (.*)$", line)
        if bullet:
            out.append(f"{bullet.group(1)}- {markdown_text(bullet.group(3))}")
        else:
            out.append(markdown_text(line))
        if line.rstrip().endswith("::"):
            out[-1] = out[-1].rstrip()[:-1]
            out.append("")
            literal = True
    return "\n".join(out)
