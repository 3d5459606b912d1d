// Schedule scripts: the lexer, the parser with the directives' signatures, and the canonical
// printer (docs/schedules.md). A script is line-based: every line is blank, a comment, a
// `node "...":` header, a `hint` line or a directive chain `stage.method(args)...`. Parsing knows
// nothing of groups; names are checked when a block is applied (ScheduleScriptApply.cpp).

#include "schedules/ScheduleScript.h"

#include "support/Error.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace nhc::sched {

namespace {

struct Token {
    enum class Kind { Ident, Int, String, Punct, End };
    Kind kind = Kind::End;
    std::string text;
};

std::string describe(const Token &t) {
    switch (t.kind) {
    case Token::Kind::Ident:
        return "'" + t.text + "'";
    case Token::Kind::Int:
        return "number " + t.text;
    case Token::Kind::String:
        return "string \"" + t.text + "\"";
    case Token::Kind::Punct:
        return "'" + t.text + "'";
    case Token::Kind::End:
        break;
    }
    return "end of line";
}

/** One line of a script, split into tokens and a trailing comment. */
struct LexedLine {
    std::vector<Token> tokens; ///< ends with an End token
    bool indented = false;
    bool has_comment = false;
    std::string comment; ///< after '#', trailing blanks removed
};

class Parser {
public:
    Parser(const std::string &file) { script_.file = file; }

    ScheduleScript parse(const std::string &text);

private:
    [[noreturn]] void fail(const char *code, const std::string &what) const {
        user_error(code, script_.file, ":", line_no_, ": ", what);
    }

    LexedLine lex(const std::string &line) const;
    const Token &peek() const { return (*tokens_)[pos_]; }
    const Token &next() { return (*tokens_)[pos_ < tokens_->size() - 1 ? pos_++ : pos_]; }
    bool accept(const std::string &punct);
    void expect(const std::string &punct, const std::string &context);
    std::string expect_ident(const std::string &what);
    ScriptArg parse_arg(const std::string &method);
    void parse_header(const LexedLine &l);
    void parse_hint(ScriptLine &out);
    void parse_directive(ScriptLine &out);
    void check_directive(const ScriptLine &l) const;
    void check_hint(const ScriptLine &l) const;
    void add_to_block(ScriptLine l);

    ScheduleScript script_;
    int line_no_ = 0;
    const std::vector<Token> *tokens_ = nullptr;
    size_t pos_ = 0;
    std::vector<std::string> pending_comments_; // top-level comments waiting for a header
    std::map<std::string, int> block_lines_;
};

bool is_ident_start(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_ident_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

std::string trim_right(std::string s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.pop_back();
    return s;
}

LexedLine Parser::lex(const std::string &line) const {
    LexedLine out;
    size_t i = 0, n = line.size();
    while (i < n && (line[i] == ' ' || line[i] == '\t'))
        i++;
    out.indented = i > 0;
    while (i < n) {
        char c = line[i];
        if (c == ' ' || c == '\t' || c == '\r') {
            i++;
        } else if (c == '#') {
            out.has_comment = true;
            out.comment = trim_right(line.substr(i + 1));
            break;
        } else if (is_ident_start(c)) {
            size_t j = i;
            while (j < n && is_ident_char(line[j]))
                j++;
            out.tokens.push_back({Token::Kind::Ident, line.substr(i, j - i)});
            i = j;
        } else if (std::isdigit(static_cast<unsigned char>(c))) {
            size_t j = i;
            while (j < n && std::isdigit(static_cast<unsigned char>(line[j])))
                j++;
            if (j < n && is_ident_start(line[j]))
                fail("NHC_ESCH101", "expected a number, found '" + line.substr(i, j - i + 1) + "'");
            if (j - i > 9) // factors and dims are small; keeps the value in an int
                fail("NHC_ESCH101", "number " + line.substr(i, j - i) + " is too large");
            out.tokens.push_back({Token::Kind::Int, line.substr(i, j - i)});
            i = j;
        } else if (c == '"') {
            std::string s;
            size_t j = i + 1;
            for (; j < n && line[j] != '"'; j++) {
                if (line[j] == '\\' && j + 1 < n)
                    j++;
                s += line[j];
            }
            if (j >= n)
                fail("NHC_ESCH101", "expected '\"' to close the string \"" + s + "\"");
            out.tokens.push_back({Token::Kind::String, s});
            i = j + 1;
        } else if (c == ':' && i + 1 < n && line[i + 1] == ':') {
            out.tokens.push_back({Token::Kind::Punct, "::"});
            i += 2;
        } else if (std::string(".(),:;").find(c) != std::string::npos) {
            out.tokens.push_back({Token::Kind::Punct, std::string(1, c)});
            i++;
        } else {
            fail("NHC_ESCH101", std::string("unexpected character '") + c + "'");
        }
    }
    out.tokens.push_back({Token::Kind::End, ""});
    return out;
}

bool Parser::accept(const std::string &punct) {
    if (peek().kind == Token::Kind::Punct && peek().text == punct) {
        next();
        return true;
    }
    return false;
}

void Parser::expect(const std::string &punct, const std::string &context) {
    if (!accept(punct))
        fail("NHC_ESCH101", "expected '" + punct + "' " + context + ", found " + describe(peek()));
}

std::string Parser::expect_ident(const std::string &what) {
    if (peek().kind != Token::Kind::Ident)
        fail("NHC_ESCH101", "expected " + what + ", found " + describe(peek()));
    return next().text;
}

ScriptArg Parser::parse_arg(const std::string &method) {
    ScriptArg a;
    if (peek().kind == Token::Kind::Int) {
        a.kind = ScriptArg::Kind::Int;
        a.text = next().text;
        a.value = std::stoll(a.text);
        return a;
    }
    a.text = expect_ident("an argument of " + method + " (a name or a number)");
    if (accept("::")) {
        a.kind = ScriptArg::Kind::Qualified;
        a.text += "::" + expect_ident("a name after '::'");
    } else if (accept(".")) {
        a.text += "." + expect_ident("an RDom dimension (x, y, z, w) after '" + a.text + ".'");
    }
    return a;
}

void Parser::parse_header(const LexedLine &l) {
    next(); // `node`
    if (peek().kind != Token::Kind::String)
        fail("NHC_ESCH101",
             "expected the node name as a string after 'node', found " + describe(peek()));
    ScriptBlock b;
    b.nodes.push_back(next().text);
    while (accept(",")) { // the nodes of a fused group
        if (peek().kind != Token::Kind::String)
            fail("NHC_ESCH101",
                 "expected another node name as a string after ',', found " + describe(peek()));
        b.nodes.push_back(next().text);
    }
    expect(":", "after the node names");
    if (peek().kind != Token::Kind::End)
        fail("NHC_ESCH101", "expected end of line after 'node " + b.quoted_nodes() + ":', found " +
                                describe(peek()));
    for (const std::string &node : b.nodes) {
        auto [it, fresh] = block_lines_.emplace(node, line_no_);
        if (!fresh)
            fail("NHC_ESCH103", "node \"" + node + "\" already has a block at line " +
                                    std::to_string(it->second) + "; merge the two blocks");
    }
    b.line = line_no_;
    b.leading_comments = std::move(pending_comments_);
    pending_comments_.clear();
    if (l.has_comment) {
        ScriptLine c;
        c.kind = ScriptLine::Kind::Comment;
        c.line = line_no_;
        c.comment = l.comment;
        c.has_comment = true;
        b.lines.push_back(c);
    }
    script_.blocks.push_back(std::move(b));
}

void Parser::parse_hint(ScriptLine &out) {
    next(); // `hint`
    out.kind = ScriptLine::Kind::Hint;
    out.hint = expect_ident(
        "the name of a hint (partition_dim, partition_split, fold_broadcast, buffers, resident, "
        "pe_order, engine)");
    while (peek().kind == Token::Kind::Ident || peek().kind == Token::Kind::Int) {
        ScriptArg a;
        a.kind = peek().kind == Token::Kind::Int ? ScriptArg::Kind::Int : ScriptArg::Kind::Name;
        a.text = next().text;
        if (a.kind == ScriptArg::Kind::Int)
            a.value = std::stoll(a.text);
        out.hint_args.push_back(a);
    }
    if (peek().kind != Token::Kind::End)
        fail("NHC_ESCH101", "expected a stage name, a number or end of line in the hint, found " +
                                describe(peek()));
}

void Parser::parse_directive(ScriptLine &out) {
    out.kind = ScriptLine::Kind::Directive;
    out.stage = expect_ident("a stage name, 'hint' or 'node'");
    expect(".", "after the stage name '" + out.stage + "'");
    do {
        ScriptCall call;
        call.method = expect_ident("a directive name after '.'");
        expect("(", "after '" + call.method + "'");
        if (!accept(")")) {
            do
                call.args.push_back(parse_arg(call.method));
            while (accept(","));
            expect(")", "after the arguments of " + call.method);
        }
        out.calls.push_back(std::move(call));
    } while (accept("."));
    accept(";"); // tolerated, so that lines pasted from C++ parse
    if (peek().kind != Token::Kind::End)
        fail("NHC_ESCH101", "expected '.' or end of line after " + out.calls.back().method +
                                "(...), found " + describe(peek()));
}

// ---- signatures ----

enum class Param { Loop, NewLoop, Stage, Factor, Index, Memory };

struct Signature {
    std::vector<std::vector<Param>> forms; ///< accepted argument lists
    bool variadic = false;                 ///< reorder: one or more loops
    bool tail = false;                     ///< an optional TailStrategy:: last argument
    bool func_only = false;                ///< a Func method (not on update stages)
    const char *usage;
};

const std::map<std::string, Signature> &signatures() {
    using P = Param;
    static const std::map<std::string, Signature> s = {
        {"split",
         {{{P::Loop, P::NewLoop, P::NewLoop, P::Factor}},
          false,
          true,
          false,
          "split(old, outer, inner, factor[, TailStrategy::...])"}},
        {"fuse",
         {{{P::Loop, P::Loop, P::NewLoop}}, false, false, false, "fuse(inner, outer, fused)"}},
        {"tile",
         {{{P::Loop, P::Loop, P::NewLoop, P::NewLoop, P::NewLoop, P::NewLoop, P::Factor, P::Factor},
           {P::Loop, P::Loop, P::NewLoop, P::NewLoop, P::Factor, P::Factor}},
          false,
          true,
          false,
          "tile(x, y, xo, yo, xi, yi, xfactor, yfactor[, TailStrategy::...]) or "
          "tile(x, y, xi, yi, xfactor, yfactor[, TailStrategy::...])"}},
        {"reorder", {{{P::Loop}}, true, false, false, "reorder(innermost, ..., outermost)"}},
        {"unroll", {{{P::Loop}}, false, false, false, "unroll(loop)"}},
        {"update", {{{}, {P::Index}}, false, false, false, "update() or update(index)"}},
        {"rfactor", {{{P::Loop, P::NewLoop}}, false, false, false, "rfactor(outer, var)"}},
        {"compute_at", {{{P::Stage, P::Loop}}, false, false, true, "compute_at(stage, loop)"}},
        {"store_at", {{{P::Stage, P::Loop}}, false, false, true, "store_at(stage, loop)"}},
        {"compute_root", {{{}}, false, false, true, "compute_root()"}},
        {"store_root", {{{}}, false, false, true, "store_root()"}},
        {"compute_inline", {{{}}, false, false, true, "compute_inline()"}},
        {"store_in", {{{P::Memory}}, false, false, true, "store_in(SBUF) or store_in(PSUM)"}},
        {"bound",
         {{{P::Loop, P::Index, P::Factor}}, false, false, true, "bound(var, min, extent)"}},
    };
    return s;
}

const std::set<std::string> &tail_strategies() {
    static const std::set<std::string> t = {
        "RoundUp",         "GuardWithIf",  "Predicate", "PredicateLoads",
        "PredicateStores", "ShiftInwards", "Auto"};
    return t;
}

bool fits(Param p, const ScriptArg &a) {
    bool plain = a.kind == ScriptArg::Kind::Name && a.text.find('.') == std::string::npos;
    switch (p) {
    case Param::Loop:
        return a.kind == ScriptArg::Kind::Name;
    case Param::NewLoop:
    case Param::Stage:
        return plain;
    case Param::Factor:
        return a.kind == ScriptArg::Kind::Int && a.value > 0;
    case Param::Index:
        return a.kind == ScriptArg::Kind::Int;
    case Param::Memory:
        return plain && (a.text == "SBUF" || a.text == "PSUM");
    }
    return false;
}

bool matches(const Signature &sig, const std::vector<ScriptArg> &args) {
    if (sig.variadic)
        return !args.empty() &&
               std::all_of(args.begin(), args.end(), [&](auto &a) { return fits(Param::Loop, a); });
    for (const std::vector<Param> &form : sig.forms) {
        size_t n = form.size();
        if (args.size() != n && !(sig.tail && args.size() == n + 1))
            continue;
        bool ok = true;
        for (size_t i = 0; i < n; i++)
            ok = ok && fits(form[i], args[i]);
        if (ok && args.size() == n + 1) {
            const ScriptArg &t = args[n];
            ok = t.kind == ScriptArg::Kind::Qualified && t.text.rfind("TailStrategy::", 0) == 0 &&
                 tail_strategies().count(t.text.substr(14));
        }
        if (ok)
            return true;
    }
    return false;
}

std::string arg_list(const std::vector<ScriptArg> &args) {
    std::string s;
    for (const ScriptArg &a : args)
        s += (s.empty() ? "" : ", ") + a.text;
    return s;
}

void Parser::check_directive(const ScriptLine &l) const {
    for (size_t i = 0; i < l.calls.size(); i++) {
        const ScriptCall &c = l.calls[i];
        auto it = signatures().find(c.method);
        if (it == signatures().end())
            fail("NHC_ESCH102", "unknown directive '" + c.method +
                                    "'; expected one of split, fuse, tile, reorder, unroll, "
                                    "update, rfactor, compute_at, compute_root, compute_inline, "
                                    "store_at, store_root, store_in, bound");
        const Signature &sig = it->second;
        if (!matches(sig, c.args))
            fail("NHC_ESCH102", "wrong arguments for " + c.method + ": expected " + sig.usage +
                                    ", found " + c.method + "(" + arg_list(c.args) + ")");
        if (c.method == "update" && i != 0)
            fail("NHC_ESCH102",
                 "update() must come right after the stage name ('" + l.stage + ".update()...')");
        // rfactor returns a new stage, which a script schedules on lines of its own.
        if (c.method == "rfactor" && (l.calls[0].method != "update" || i + 1 != l.calls.size()))
            fail("NHC_ESCH102", "rfactor applies to an update and ends its line: '" + l.stage +
                                    ".update().split(k, ko, ki, 512).rfactor(ko, u)'; the new "
                                    "stage is '" +
                                    l.stage + "_intm'");
        if (sig.func_only && l.calls[0].method == "update")
            fail("NHC_ESCH102", c.method +
                                    " applies to the whole stage, not to an update; write "
                                    "it on a line of its own: '" +
                                    l.stage + "." + c.method + "(...)'");
    }
}

void Parser::check_hint(const ScriptLine &l) const {
    static const std::map<std::string, std::string> second_arg = {{"partition_dim", "dim"},
                                                                  {"partition_split", "chunk"},
                                                                  {"fold_broadcast", "period"},
                                                                  {"buffers", "count"}};
    if (l.hint == "resident") { // the one hint of a single argument
        if (l.hint_args.size() != 1 || l.hint_args[0].kind != ScriptArg::Kind::Name)
            fail("NHC_ESCH102", "wrong arguments for hint resident: expected 'hint resident "
                                "<stage>', found 'hint resident " +
                                    arg_list(l.hint_args) + "'");
        return;
    }
    if (l.hint == "engine") { // a stage and an engine's name
        static const std::set<std::string> engines = {"act", "dve", "pool"};
        if (l.hint_args.size() != 2 || l.hint_args[0].kind != ScriptArg::Kind::Name ||
            !engines.count(l.hint_args[1].text))
            fail("NHC_ESCH102", "wrong arguments for hint engine: expected 'hint engine <stage> "
                                "act|dve|pool', found 'hint engine " +
                                    arg_list(l.hint_args) + "'");
        return;
    }
    if (l.hint == "pe_order") { // of the group, not of a stage
        if (l.hint_args.size() != 1 || l.hint_args[0].text != "critical_path")
            fail("NHC_ESCH102", "wrong arguments for hint pe_order: expected 'hint pe_order "
                                "critical_path', found 'hint pe_order " +
                                    arg_list(l.hint_args) + "'");
        return;
    }
    auto it = second_arg.find(l.hint);
    if (it == second_arg.end())
        fail("NHC_ESCH102", "unknown hint '" + l.hint +
                                "'; expected partition_dim, partition_split, fold_broadcast, "
                                "buffers, resident, pe_order or engine");
    if (l.hint_args.size() != 2 || l.hint_args[0].kind != ScriptArg::Kind::Name ||
        l.hint_args[1].kind != ScriptArg::Kind::Int)
        fail("NHC_ESCH102", "wrong arguments for hint " + l.hint + ": expected 'hint " + l.hint +
                                " <stage> <" + it->second + ">', found 'hint " + l.hint + " " +
                                arg_list(l.hint_args) + "'");
}

void Parser::add_to_block(ScriptLine l) {
    if (script_.blocks.empty())
        fail("NHC_ESCH101", "expected 'node \"<onnx node name>\":' before the first directive");
    ScriptBlock &b = script_.blocks.back();
    // Top-level comments between directives of one block stay in it (printed indented).
    for (std::string &c : pending_comments_) {
        ScriptLine cl;
        cl.kind = ScriptLine::Kind::Comment;
        cl.line = l.line;
        cl.comment = std::move(c);
        cl.has_comment = true;
        b.lines.push_back(std::move(cl));
    }
    pending_comments_.clear();
    b.lines.push_back(std::move(l));
}

ScheduleScript Parser::parse(const std::string &text) {
    std::istringstream in(text);
    std::string raw;
    while (std::getline(in, raw)) {
        line_no_++;
        LexedLine l = lex(raw);
        tokens_ = &l.tokens;
        pos_ = 0;
        if (peek().kind == Token::Kind::End) {
            if (!l.has_comment)
                continue; // blank
            if (!l.indented || script_.blocks.empty()) {
                pending_comments_.push_back(l.comment);
                continue;
            }
            ScriptLine c;
            c.kind = ScriptLine::Kind::Comment;
            c.line = line_no_;
            c.comment = l.comment;
            c.has_comment = true;
            add_to_block(std::move(c));
            continue;
        }
        if (peek().kind == Token::Kind::Ident && peek().text == "node" &&
            (*tokens_)[1].kind != Token::Kind::Punct) {
            parse_header(l);
            continue;
        }
        ScriptLine sl;
        sl.line = line_no_;
        sl.has_comment = l.has_comment;
        sl.comment = l.comment;
        if (peek().kind == Token::Kind::Ident && peek().text == "hint" &&
            (*tokens_)[1].kind == Token::Kind::Ident) {
            parse_hint(sl);
            check_hint(sl);
        } else {
            parse_directive(sl);
            check_directive(sl);
        }
        add_to_block(std::move(sl));
    }
    script_.trailing_comments = std::move(pending_comments_);
    return std::move(script_);
}

std::string quote(const std::string &s) {
    std::string q = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\')
            q += '\\';
        q += c;
    }
    return q + "\"";
}

void print_line(std::ostream &os, const ScriptLine &l) {
    os << "  ";
    switch (l.kind) {
    case ScriptLine::Kind::Comment:
        os << "#" << l.comment << "\n";
        return;
    case ScriptLine::Kind::Hint:
        os << "hint " << l.hint;
        for (const ScriptArg &a : l.hint_args)
            os << " " << a.text;
        break;
    case ScriptLine::Kind::Directive:
        os << l.stage;
        for (const ScriptCall &c : l.calls) {
            // update(0) is update(): Halide's default argument
            bool bare = c.method == "update" && c.args.size() == 1 && c.args[0].value == 0;
            os << "." << c.method << "(" << (bare ? "" : arg_list(c.args)) << ")";
        }
        break;
    }
    if (l.has_comment)
        os << "  #" << l.comment;
    os << "\n";
}

} // namespace

std::string ScriptBlock::quoted_nodes() const {
    std::string s;
    for (const std::string &n : nodes)
        s += (s.empty() ? "" : ", ") + quote(n);
    return s;
}

const ScriptBlock *ScheduleScript::find(const std::string &node_name) const {
    for (const Block &b : blocks)
        if (std::find(b.nodes.begin(), b.nodes.end(), node_name) != b.nodes.end())
            return &b;
    return nullptr;
}

std::string ScheduleScript::to_string() const {
    std::ostringstream os;
    for (size_t i = 0; i < blocks.size(); i++) {
        const Block &b = blocks[i];
        if (i > 0)
            os << "\n";
        for (const std::string &c : b.leading_comments)
            os << "#" << c << "\n";
        os << "node " << b.quoted_nodes() << ":\n";
        for (const ScriptLine &l : b.lines)
            print_line(os, l);
    }
    if (!blocks.empty() && !trailing_comments.empty())
        os << "\n";
    for (const std::string &c : trailing_comments)
        os << "#" << c << "\n";
    return os.str();
}

ScheduleScript parse_schedule(const std::string &text, const std::string &file) {
    return Parser(file).parse(text);
}

ScheduleScript parse_schedule_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        user_error("NHC_EIO001", "schedule file '", path, "' cannot be read");
    std::ostringstream text;
    text << in.rdbuf();
    return parse_schedule(text.str(), path);
}

} // namespace nhc::sched
