"""Templates written by someone else are data: rendered only in the bounded Jinja2 sandbox, with the
request's fields as their only context, and every part of them (prompt, parser, scale) checked before
the first call.

Each hostile template below is given to ``validity run --template`` against the loopback server: it is
refused with one ``error:`` line naming the file, the line and the field (exit 2), the server receives no
request, no file appears in the working folder and no run folder is written.
"""

from __future__ import annotations

import jinja2
import pytest

from judgeaudit.errors import InputError
from judgeaudit.judges.templates import JudgeTemplate, library, parse_template
from judgeaudit.records import JudgeRequest

HEAD = 'name: hostile\nversion: "1"\nform: graded\nscale: {min: 1, max: 10}\n'
USER_LINE = 5   # the line of ``user:`` below HEAD

# (case, the user part, the text the error line must hold)
HOSTILE_PROMPTS = [
    ("cycler os.popen", "{{ cycler.__init__.__globals__.os.popen('touch PWNED').read() }}", "is private"),
    ("lipsum os.popen", "{{ lipsum.__globals__['os'].popen('touch PWNED').read() }}", "is private"),
    ("joiner builtins open", "{{ joiner.__init__.__globals__.__builtins__.open('/etc/hostname').read() }}",
     "is private"),
    ("namespace class", "{{ namespace.__init__.__globals__ }}", "is private"),
    ("self globals", "{{ self.__init__.__globals__.__builtins__ }}", "is private"),
    ("self context", "{{ self._TemplateReference__context }}", "is private"),
    ("class mro subclasses", "{{ ''.__class__.__mro__[1].__subclasses__() }}", "is private"),
    ("getitem mro", "{{ text['__class__'] }}", "is private"),
    ("attr filter", "{{ text|attr('__class__')|attr('__mro__') }}", "is private"),
    ("attr filter built name", "{{ (text|attr('_' ~ '_class__')).__name__ }}", "sandbox refuses"),
    ("str.format attribute", '{{ "{0.__class__.__mro__}".format(text) }}', "sandbox refuses"),
    ("format filter width", "{{ '%999999999d'|format(1) }}", "format width"),
    ("str.format width", '{{ "{:>999999999}".format(text) }}', "format width"),
    ("percent width", "{{ '%0999999999d' % 7 }}", "format width"),
    ("include a file", "{% include '/etc/hostname' %}", "include"),
    ("import a file", "{% import '/etc/hostname' as h %}", "import"),
    ("range bomb", "{% for i in range(30000000) %}x{% endfor %}", "30,000,000"),
    ("range over the work budget", "{% for i in range(90000) %}x{% endfor %}", "range of 90,000 numbers"),
    ("nested range bomb", "{% for i in range(9000) %}{% for j in range(9000) %}{% endfor %}{% endfor %}",
     "loop iterations"),
    ("loop over the text squared", "{% for a in text %}{% for b in text %}{% for c in range(9999) %}"
     "{% endfor %}{% endfor %}{% endfor %}", "loop iterations"),
    ("string times", "{{ 'x' * 100000000 }}", "more than 1,000,000"),
    ("list times", "{{ ([text] * 100000000)|length }}", "more than 1,000,000"),
    ("power", "{{ 2 ** 100000 }}", "bits"),
    ("recursion", "{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}", "recurses"),
    ("center filter", "{{ text|center(100000000) }}", "100,000,000"),
    ("str.ljust", "{{ text.ljust(100000000) }}", "100,000,000"),
    ("replace growth", "{{ ('x' * 999999)|replace('', 'yy') }}", "replace"),
    ("concatenation doubling",
     "{% set a = 'x' * 999999 %}{% set b = a ~ a %}{% set c = b ~ b %}{{ c ~ c }}", "1,000,000"),
    ("macro call doubling",
     "{% macro m(n) %}{% if n %}{{ m(n - 1) }}{{ m(n - 1) }}{% endif %}{% endmacro %}{{ m(40) }}",
     "sandbox refuses"),
    ("output size", "{% for i in range(2000) %}{{ 'x' * 999 }}{% endfor %}", "over the limit"),
    ("set block growth", "{% set s %}{% for i in range(2000) %}{{ 'x'|indent(999999, true) }}{% endfor %}"
     "{% endset %}{{ s|length }}", "builds more than 10,000,000"),
    ("macro output growth", "{% macro m() %}{{ 'x' * 999999 }}{% endmacro %}"
     "{% set s %}{% for i in range(2000) %}{{ m() }}{% endfor %}{% endset %}ok", "builds more than 10,000,000"),
]


def _template(tmp_path, user: str, *, head: str = HEAD, parser: str | None = None):
    f = tmp_path / "hostile.yaml"
    body = "".join(f"  {line}\n" for line in f"Claim: {{{{ text }}}}\n{user}".splitlines())
    f.write_text(head + "user: |\n" + body + (f"parser: {parser}\n" if parser else ""))
    return f


def _run(cli_main, srv, tmp_path, template):
    out = tmp_path / "out"
    return cli_main("validity", "run", "--judge", "api:openai/judge-model", "--api-base", srv.base_url,
                    "--bootstrap", "20", "--regrade", "0", "--out", out, "--template", template), out


def _one_error(res, *needles: str) -> str:
    lines = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert res.returncode == 2 and len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    assert all(n in lines[0] for n in needles), lines[0]
    return lines[0]


@pytest.fixture
def server(fake_server, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)
    return fake_server(responder=lambda prompt: "Rating: [[7]]")


@pytest.mark.parametrize("case,user,needle", HOSTILE_PROMPTS, ids=[c[0] for c in HOSTILE_PROMPTS])
def test_a_hostile_prompt_is_refused_when_loaded(case, user, needle, tmp_path, cli_main, server):
    f = _template(tmp_path, user)
    res, out = _run(cli_main, server, tmp_path, f)
    _one_error(res, f"{f}:{USER_LINE}", "field 'user'", needle)
    assert server.requests == [] and not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hostile.yaml"]   # no PWNED, no output


@pytest.mark.parametrize("name", ["cycler", "lipsum", "joiner", "namespace", "dict"])
def test_the_request_fields_are_the_only_context(name, tmp_path, cli_main, server):
    """Jinja2's default globals are not there: a template naming one is refused when it is loaded."""
    f = _template(tmp_path, f"{{{{ {name} }}}}")
    res, out = _run(cli_main, server, tmp_path, f)
    _one_error(res, f"{f}:{USER_LINE}", "field 'user'", f"'{name}' is undefined", "names the request's fields")
    assert server.requests == [] and not out.exists()


# (case, the template lines after ``user``, the field, the text the error line must hold)
HOSTILE_PARTS = [
    ("regex catastrophic backtracking", "parser: {regex: '(?P<score>(\\d|\\d\\d)+)$'}", "parser", "backtracks"),
    ("regex bomb after a label", "parser: {regex: 'Score: (?P<score>(a|aa)+)$'}", "parser", "backtracks"),
    ("regex that does not compile", "parser: {regex: '(?P<score>\\d'}", "parser", "does not compile"),
    ("JSON path that does not compile", "parser: {json: '$[[[['}", "parser", "unreadable JSON path"),
    ("JSON path with trailing junk", "parser: {json: '$.score!!'}", "parser", "unreadable JSON path"),
]


@pytest.mark.parametrize("case,tail,field,needle", HOSTILE_PARTS, ids=[c[0] for c in HOSTILE_PARTS])
def test_a_hostile_parser_is_refused_before_any_call(case, tail, field, needle, tmp_path, cli_main, server):
    f = tmp_path / "hostile.yaml"
    f.write_text(HEAD + "user: 'Claim: {{ text }} Rating:'\n" + tail + "\n")
    res, out = _run(cli_main, server, tmp_path, f)
    _one_error(res, f"{f}:{USER_LINE + 1}", f"field '{field}'", needle)
    assert server.requests == [] and not out.exists()


def test_a_huge_scale_is_refused_before_any_call(tmp_path, cli_main, server):
    f = tmp_path / "hostile.yaml"
    f.write_text(HEAD.replace("max: 10", "max: 1000000000000") + "user: 'Claim: {{ text }}'\n")
    res, out = _run(cli_main, server, tmp_path, f)
    _one_error(res, f"{f}:4", "field 'scale'", "1,000,000,000,000 points", "at most 501")
    assert server.requests == [] and not out.exists()


def test_a_scale_of_a_few_hundred_points_is_accepted():
    t = parse_template(HEAD.replace("max: 10", "max: 501") + "user: 'Claim: {{ text }}'\n")
    assert t.scale is not None and len(t.scale.values) == 501


# ---------------------------------------------------------------------------- the limits at render time

def _graded(**kw) -> JudgeRequest:
    return JudgeRequest(request_id="r1", form="graded", **kw)


def test_a_branch_the_load_probe_does_not_take_is_refused_at_render_time():
    """A hostile branch that only a real request reaches is still refused by the sandbox, before its call."""
    t = parse_template(HEAD + "user: \"{% if text == 'x' * 3 %}{{ text|attr('_' ~ '_class__') }}{% endif %}ok\"\n")
    assert t.render(_graded(text="abc")) == "ok"
    with pytest.raises(InputError, match="sandbox refuses") as e:
        t.render(_graded(text="xxx"))
    assert e.value.field == "template"


def test_output_over_the_limit_at_render_time_is_one_error():
    t = parse_template(HEAD + "user: '{{ text }}{{ text }}'\n")
    with pytest.raises(InputError, match="over the limit of 1,000,000 characters"):
        t.render(_graded(text="y" * 600_000))
    assert t.render(_graded(text="y" * 400_000)) == "y" * 800_000


def test_the_regex_time_limit_turns_a_slow_reply_into_a_parse_failure():
    """A pattern past the probe that is slow on one reply: that reply is a parse failure with the reason."""
    from judgeaudit.judges import userpattern

    rx = userpattern.compile_pattern(r"(?P<score>(\d|\d\d)+)$")
    with pytest.raises(userpattern.PatternTimeout, match="took over 0.01 s"):
        userpattern.finditer(rx, "1" * 60 + "!", timeout=0.01)
    from judgeaudit.judges.replies import read_regex
    from judgeaudit.judges.scale import Scale

    got = read_regex("Rating: 7!", "graded", Scale(min=1, max=10, higher="better"), r"Rating: (?P<score>\d+)!")
    assert got.ok and got.score == 7.0


# ---------------------------------------------------------------------------- legit templates unchanged

def _plain(text: str | None, ctx: dict) -> str | None:
    """What the unsandboxed Jinja2 environment renders (the prompts stored calls were keyed on)."""
    if text is None:
        return None
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False)
    return env.from_string(text).render(ctx)


_FIELDS = dict(text="The Eiffel Tower is in Paris.\nIt is 330 m tall.", evidence="Source: the tower is 330 m.",
               criterion="Is it faithful?", prompt="Where is the tower?", question="Where?", reference="Paris.",
               response_a="Paris.", response_b="Rome.", units=["The Eiffel Tower is in Paris.", "It is 330 m tall."])


@pytest.mark.parametrize("name", sorted(library()))
def test_a_built_in_template_renders_byte_identically(name):
    t: JudgeTemplate = library()[name]
    form = t.form if t.form in ("graded", "pairwise", "defects", "generate") else "graded"
    request = JudgeRequest(request_id="r1", form=form, **_FIELDS)
    if t.family is not None or t.form != form:
        pytest.skip(f"{name} renders a family's requests")
    ctx = t.context(request)
    assert t.render_parts(request) == (_plain(t.system, ctx), _plain(t.user, ctx))


def test_the_sandbox_has_no_globals_but_a_bounded_range():
    from judgeaudit.judges.templates import sandbox

    assert set(sandbox.environment().globals) == {"range"}
    assert sandbox.render("{% for i in range(3) %}{{ i }}{% endfor %}", {}) == "012"
