"""The public API of every workspace member, read statically, and its docstring check.

Each paper package exports its API through ``icml26.shared.exports.lazy_exports`` (a dict
literal ``name -> module`` plus a list of public ``submodules``); ``icml26.shared`` has a plain
``__all__`` list. Both are read from the package's ``__init__.py`` with ``ast``, and every name
is resolved to the object that defines it with griffe (static analysis: nothing is imported,
so neither torch nor JAX is needed to build the docs or run the check).

The docstring rule (Google style, parsed by griffe's Google parser) for every exported name:

* **function**: a docstring; every parameter of the signature (``self``/``cls`` aside,
  ``*args``/``**kwargs`` included) named in its ``Args`` section (``Keyword Args`` counts);
  a ``Returns`` (or ``Yields``) section unless the return annotation is ``None`` or ``NoReturn``
  (an unannotated function must say what it returns). ``Raises`` is encouraged, not checked.
* **class**: a docstring (the class's or its ``__init__``'s); every constructor parameter
  (griffe's view of ``__init__``, which includes dataclass fields and an ``__init__`` inherited
  from a class of the workspace) named in the class docstring's ``Args`` or ``Attributes``
  section or in the ``__init__`` docstring's ``Args``; a dataclass field may instead have its
  own docstring or comment, or be named (as a word) in the class docstring's text: configs
  describe their fields in prose groups ("width, epochs, lr: classifier training"). A class whose constructor comes from a
  library (an ``Exception``, a ``torch.nn.Module`` without its own ``__init__``) needs only
  its docstring.
* **module** (a public submodule such as ``baselines``): a module docstring.
* **attribute** (a constant such as ``icml26.shared.JSON``): a docstring (the string literal
  right below the assignment) or a comment (``#:`` above it, or on its line).

* **method** of an exported class (public: not starting with ``_``; defined in a class of the
  workspace, own or inherited, not one inherited from torch or another library): a docstring,
  since the API pages show no member without one (``show_if_no_docstring: false``). The
  methods not documented yet are listed by name in ``UNDOCUMENTED_METHODS`` below: the check
  reports them (never a silent pass) and fails on any method missing from the list, and on
  a listed method that now has a docstring or no longer exists (the list only shrinks).

Comments count because the griffe extension ``tools/docs/griffe_comments.py`` (loaded here and
by mkdocstrings) makes an attribute's comment its docstring, so the site shows them.

``python tools/docs/exports.py`` prints every exported name that breaks the rule and exits 1
when there is one (``nox -s docs`` runs it before the build).
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import griffe

sys.path.insert(0, str(Path(__file__).resolve().parent))

from griffe_comments import CommentDocstrings

ROOT = Path(__file__).resolve().parents[2]
#: Public methods of exported classes still without a docstring (canonical dotted paths), one
#: a line: the work left, printed by every run of the check. Remove a line when you document
#: the method; a new undocumented method is an error, not an entry to add.
ALLOWLIST = Path(__file__).resolve().parent / "undocumented_methods.txt"


@dataclass(frozen=True)
class Member:
    """A workspace member: ``shared`` or a paper package."""

    slug: str
    distribution: str
    module: str
    folder: Path

    @property
    def src(self) -> Path:
        return self.folder / "src"

    @property
    def init(self) -> Path:
        return self.src.joinpath(*self.module.split("."), "__init__.py")


@dataclass
class Export:
    """One exported name and where griffe found it."""

    member: Member
    name: str
    path: str  # canonical dotted path of the defining object
    kind: str  # "function", "class", "module", "attribute"
    problems: list[str] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)  # public methods without a docstring


def members() -> list[Member]:
    """Every workspace member, ``shared`` first, then the papers by slug."""
    root = tomllib.loads((ROOT / "pyproject.toml").read_text())
    out = []
    for pattern in root["tool"]["uv"]["workspace"]["members"]:
        for folder in sorted(ROOT.glob(pattern)):
            pyproject = folder / "pyproject.toml"
            if not pyproject.is_file():
                continue
            name = tomllib.loads(pyproject.read_text())["project"]["name"]
            slug = name.removeprefix("icml26-")
            module = "icml26." + slug.replace("-", "_")
            out.append(Member(slug, name, module, folder))
    return out


def search_paths() -> list[str]:
    """The ``src`` folders of every member (griffe's search path)."""
    return [str(m.src) for m in members()]


def _literal_strings(node: ast.expr) -> list[str]:
    return [
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def _assigned(tree: ast.Module, name: str) -> ast.expr | None:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return node.value
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == name
        ):
            return node.value
    return None


def declared_exports(member: Member) -> tuple[dict[str, str | None], list[str]]:
    """``(name -> defining module or None, public submodules)`` from the member's ``__init__``.

    A ``lazy_exports(__name__, {...}, submodules=[...])`` call gives both; a plain ``__all__``
    list gives names whose module griffe resolves (``None``)."""
    tree = ast.parse(member.init.read_text(), filename=str(member.init))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "lazy_exports"
        ):
            mapping = node.args[1]
            if isinstance(mapping, ast.Name):  # `_EXPORTS = {...}` above the call
                mapping = _assigned(tree, mapping.id)
            if not isinstance(mapping, ast.Dict):
                raise ValueError(f"{member.init}: lazy_exports' exports must be a dict literal")
            names = {
                k.value: v.value
                for k, v in zip(mapping.keys, mapping.values, strict=True)
                if isinstance(k, ast.Constant) and isinstance(v, ast.Constant)
            }
            subs = [
                s
                for kw in node.keywords
                if kw.arg == "submodules"
                for s in _literal_strings(kw.value)
            ]
            return names, subs
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return dict.fromkeys(_literal_strings(node.value)), []
    raise ValueError(f"{member.init}: neither lazy_exports(...) nor an __all__ list")


def _absolute(package: str, module: str) -> str:
    if not module.startswith("."):
        return module
    base = package.split(".")
    level = len(module) - len(module.lstrip("."))
    if level > 1:
        base = base[: -(level - 1)]
    rest = module.lstrip(".")
    return ".".join(base + ([rest] if rest else []))


def loader() -> griffe.GriffeLoader:
    """A static griffe loader over every member's sources, Google docstrings."""
    return griffe.GriffeLoader(
        extensions=griffe.load_extensions(CommentDocstrings),
        search_paths=search_paths(),
        docstring_parser=griffe.Parser.google,
        allow_inspection=False,
    )


def exports(member: Member, load: griffe.GriffeLoader) -> list[Export]:
    """Every exported name of ``member``, resolved and checked, in ``__all__`` order (sorted)."""
    collection = load.modules_collection
    package = collection[member.module] if member.module in collection else load.load(member.module)
    names, subs = declared_exports(member)
    out = []
    for name in sorted([*names, *subs]):
        if name in subs:
            obj = package[name]
        else:
            module = names[name]
            owner = load.modules_collection[_absolute(member.module, module)] if module else package
            try:
                obj = owner[name]
            except KeyError:  # e.g. `A, B = 0, 1`: griffe sees no attribute named A
                path = f"{owner.path}.{name}"
                out.append(Export(member, name, path, "unknown", ["not visible to griffe"]))
                continue
        if obj.is_alias:
            obj = obj.final_target
        bare = undocumented_methods(obj) if obj.kind is griffe.Kind.CLASS else []
        out.append(Export(member, name, obj.path, obj.kind.value, problems(obj), bare))
    return out


def undocumented_methods(cls: griffe.Class, prefix: str = "icml26.") -> list[str]:
    """Canonical paths of ``cls``'s public methods without a docstring: its own and those it
    inherits from classes of the workspace (paths starting with ``prefix``), not those of
    library classes."""
    out = []
    try:
        candidates = cls.all_members
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        candidates = cls.members
    for name, member in sorted(candidates.items()):
        if name.startswith("_"):
            continue
        try:
            obj = member.final_target if member.is_alias else member
        except (griffe.AliasResolutionError, griffe.CyclicAliasError):
            continue
        if obj.kind is not griffe.Kind.FUNCTION or not obj.path.startswith(prefix):
            continue
        if not (obj.docstring and obj.docstring.value.strip()):
            out.append(obj.path)
    return out


def read_allowlist(path: Path = ALLOWLIST) -> set[str]:
    """The dotted paths listed in ``path`` (``#`` comments and blank lines aside)."""
    if not path.is_file():
        return set()
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return {line for line in lines if line}


# --- the rule --------------------------------------------------------------------------------

_SKIP_PARAMS = {"self", "cls"}
_NO_RETURN = {"None", "NoReturn", "Never"}


def _sections(docstring: griffe.Docstring | None) -> list[griffe.DocstringSection]:
    if docstring is None or not docstring.value.strip():
        return []
    return docstring.parse(griffe.Parser.google, warnings=False)


def _named(sections: list[griffe.DocstringSection], *kinds: str) -> set[str]:
    names = set()
    for section in sections:
        if section.kind.value in kinds:
            names |= {item.name.lstrip("*") for item in section.value}
    return names


def _has(sections: list[griffe.DocstringSection], *kinds: str) -> bool:
    return any(s.kind.value in kinds for s in sections)


def _params(obj: griffe.Function | griffe.Class) -> list[str]:
    return [p.name for p in obj.parameters if p.name not in _SKIP_PARAMS]


def _field_documented(cls: griffe.Class, name: str) -> bool:
    """A dataclass field is documented by its own docstring (or comment: the griffe extension
    ``griffe_comments`` makes a comment the docstring), or by its name (as a word) in the
    class docstring's text (configs describe fields in prose groups)."""
    attr = cls.all_members.get(name)
    if attr is not None and not attr.is_alias and attr.docstring and attr.docstring.value.strip():
        return True
    text = cls.docstring.value if cls.docstring else ""
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text) is not None


def problems(obj: griffe.Object) -> list[str]:
    """What ``obj``'s docstring lacks under the rule in the module docstring (empty: none)."""
    if obj.kind is griffe.Kind.MODULE or obj.kind is griffe.Kind.ATTRIBUTE:
        return [] if obj.docstring and obj.docstring.value.strip() else ["no docstring"]
    if obj.kind is griffe.Kind.FUNCTION:
        sections = _sections(obj.docstring)
        if not sections:
            return ["no docstring"]
        found = []
        missing = [
            p for p in _params(obj) if p not in _named(sections, "parameters", "other parameters")
        ]
        if missing:
            found.append("Args missing " + ", ".join(missing))
        returns = str(obj.returns) if obj.returns is not None else ""
        if returns not in _NO_RETURN and not _has(sections, "returns", "yields"):
            found.append("no Returns")
        return found
    if obj.kind is griffe.Kind.CLASS:
        sections = _sections(obj.docstring)
        init = obj.members.get("__init__")
        init_sections = _sections(init.docstring) if init is not None and not init.is_alias else []
        if not sections and not init_sections:
            return ["no docstring"]
        documented = _named(sections, "parameters", "other parameters", "attributes")
        documented |= _named(init_sections, "parameters", "other parameters")
        try:
            params = _params(obj)
        except (griffe.AliasResolutionError, griffe.CyclicAliasError):
            params = []
        missing = [p for p in params if p not in documented]
        if "dataclass" in obj.labels:
            missing = [p for p in missing if not _field_documented(obj, p)]
        return ["constructor args missing " + ", ".join(missing)] if missing else []
    return []


def method_problems(bare: set[str], allowed: set[str]) -> tuple[list[str], list[str]]:
    """``(errors, allowed and still bare)``: a bare method not in the allow-list, or a listed
    one that is documented or gone, is an error."""
    errors = [f"{path}: public method without a docstring" for path in sorted(bare - allowed)]
    errors += [
        f"{path}: listed in {ALLOWLIST.name} but documented or gone: remove the line"
        for path in sorted(allowed - bare)
    ]
    return errors, sorted(bare & allowed)


def main() -> int:
    """Print every exported name that breaks the rule; 1 if there is one, else 0."""
    load = loader()
    bad = total = 0
    bare: set[str] = set()
    for member in members():
        for export in exports(member, load):
            total += 1
            bare.update(export.methods)
            if export.problems:
                bad += 1
                print(
                    f"{member.module}.{export.name} ({export.path}, {export.kind}): "
                    + "; ".join(export.problems)
                )
    print(
        f"{bad} of {total} exported names lack an Args/Returns docstring (rule: tools/docs/exports.py)"
    )
    errors, allowed = method_problems(bare, read_allowlist())
    for line in errors:
        print(line)
    if allowed:
        print(
            f"{len(allowed)} public methods still without a docstring, allowed by "
            f"tools/docs/{ALLOWLIST.name} (work left: document them and remove their lines):"
        )
        for path in allowed:
            print(f"  {path}")
    print(f"{len(errors)} method docstring errors")
    return 1 if bad or errors else 0


if __name__ == "__main__":
    sys.exit(main())
