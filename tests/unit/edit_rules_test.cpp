// lib/core/edit/edit_rules: where an index lands and the arithmetic of +=, shared
// by the span editor and the value-tree reference.
#include <catch2/catch.hpp>

#include "core/edit/assign.hpp"
#include "core/edit/edit_rules.hpp"
#include "core/json/json.hpp"
#include "sys/base/error.hpp"
#include "reference.hpp"

using namespace loopkit;
using edit_rules::decimal_sum;

namespace {

std::string sum_text(const std::string& a, const std::string& b) {
  Path p = parse_path("x");
  json::value va = json::parse(a, "a", {}, json::Literals::as_written);
  json::value vb = json::parse(b, "b", {}, json::Literals::as_written);
  return json::compact(edit_rules::number_sum(va, vb, p));
}

}  // namespace

TEST_CASE("issue 23: decimals add as a person adds them, 0.1 + 0.2 is 0.3", "[edit_rules]") {
  CHECK(sum_text("0.1", "0.2") == "0.3");
  CHECK(sum_text("2.08", "0.1") == "2.18");  // 2.1799999999999997 in doubles
  CHECK(sum_text("0.3", "-0.1") == "0.2");
  CHECK(sum_text("0.1", "-0.1") == "0");
  CHECK(sum_text("1.5", "1.5") == "3");
  CHECK(sum_text("1", "0.5") == "1.5");
  CHECK(sum_text("-1", "0.25") == "-0.75");
  CHECK(sum_text("1e2", "1") == "101");
  CHECK(sum_text("1.0", "2.50") == "3.5");
  CHECK(sum_text("0.000001", "0.000002") == "0.000003");
  CHECK(sum_text("1e-7", "1e-7") == "2e-07");
  CHECK(sum_text("1e30", "1e30") == "2e+30");
  CHECK(sum_text("1e20", "1") == "100000000000000000001");
  // a total of many cents stays exact
  json::value total = 0;
  Path p = parse_path("total");
  for (int i = 0; i < 1000; ++i) total = edit_rules::number_sum(total, 0.01, p);
  CHECK(json::compact(total) == "10");
}

TEST_CASE("issue 23: integers stay exact, in 128 bits, as before", "[edit_rules]") {
  CHECK(sum_text("1", "2") == "3");
  CHECK(sum_text("9223372036854775807", "1") == "9223372036854775808");
  CHECK(sum_text("123456789012345678901234567890", "1") == "123456789012345678901234567891");
  CHECK(sum_text("-5", "5") == "0");
  CHECK(sum_text("-0", "1") == "1");
}

TEST_CASE("issue 23: past 34 significant digits the sum is today's double", "[edit_rules]") {
  // 34 digits: exact
  CHECK(decimal_sum("0.123456789012345678901234567890123", "1") == "1.123456789012345678901234567890123");
  CHECK(!decimal_sum("0.1234567890123456789012345678901234", "1"));
  CHECK(sum_text("1e30", "2.5e-7") == "1e+30");
  CHECK(sum_text("129223372036854775807345678901234.5678901234567890", "1") == "1.2922337203685477e+32");
  CHECK(sum_text("1e-400", "2") == "2");  // far apart: doubles, where 1e-400 is 0
  CHECK(!decimal_sum("1e-999999999999999999999", "1"));
  CHECK(decimal_sum("0e400", "0.5") == "0.5");
  // exact, but no double holds it: exit 3, as an overflowing double sum
  CHECK_THROWS_WITH(sum_text("1e308", "1e308"), "x: the sum overflows a double");
  CHECK_THROWS_WITH(sum_text("1.7e308", "2e307"), "x: the sum overflows a double");
}

TEST_CASE("the reference edit_value and the span editor share the arithmetic", "[edit_rules]") {
  json::value doc = json::parse(R"({"f":0.1})", "t");
  reference::edit_value(doc, parse_assignment("f+=0.2"));
  CHECK(json::compact(doc) == R"({"f":0.3})");
}

TEST_CASE("where an index lands", "[edit_rules]") {
  CHECK(edit_rules::landing(0, 3, false) == 0u);
  CHECK(edit_rules::landing(-1, 3, false) == 2u);
  CHECK(!edit_rules::landing(3, 3, false));
  CHECK(edit_rules::landing(3, 3, true) == 3u);
  CHECK(!edit_rules::landing(-4, 3, true));
  CHECK(!edit_rules::landing(4, 3, true));
  CHECK(edit_rules::landing(0, 0, true) == 0u);
}

namespace {

std::string op_text(char op, const std::string& a, const std::string& b) {
  Path p = parse_path("x");
  json::value va = json::parse(a, "a", {}, json::Literals::as_written);
  json::value vb = json::parse(b, "b", {}, json::Literals::as_written);
  return json::compact(edit_rules::number_op(op, va, vb, p));
}

Exit op_code(char op, const std::string& a, const std::string& b) {
  try {
    op_text(op, a, b);
  } catch (const Error& e) {
    return e.code();
  }
  return Exit::ok;
}

}  // namespace

TEST_CASE("issue 39: -= *= /= %= on exact decimals, jq's remainder, division by zero exit 3", "[edit_rules]") {
  CHECK(op_text('-', "0.3", "0.1") == "0.2");
  CHECK(op_text('-', "5", "-1") == "6");
  CHECK(op_text('*', "0.1", "3") == "0.3");
  CHECK(op_text('*', "2.5", "0.4") == "1");
  CHECK(op_text('*', "-1.5", "2") == "-3");
  CHECK(op_text('*', "123456789", "1000000000") == "123456789000000000");
  CHECK(op_text('/', "1", "8") == "0.125");
  CHECK(op_text('/', "1", "3") == "0.3333333333333333333333333333333333");
  CHECK(op_text('/', "2", "3") == "0.6666666666666666666666666666666667");  // rounded half to even
  CHECK(op_text('/', "-10", "4") == "-2.5");
  CHECK(op_text('/', "1e-3", "8") == "0.000125");
  CHECK(op_text('/', "6", "3") == "2");
  CHECK(op_text('%', "7", "3") == "1");
  CHECK(op_text('%', "-7", "3") == "-1");
  CHECK(op_text('%', "7", "-3") == "1");
  CHECK(op_text('%', "5.5", "2") == "1");
  CHECK(op_text('%', "-4", "2") == "0");
  CHECK(op_text('%', "123456789012345678901234567891", "7") == "1");  // exact past 64 bits
  CHECK(op_code('/', "1", "0") == Exit::data);
  CHECK(op_code('/', "1", "0.0") == Exit::data);
  CHECK(op_code('%', "1", "0.5") == Exit::data);
  CHECK(op_code('*', "1e300", "1e300") == Exit::data);
  CHECK(edit_rules::decimal_quotient("1", "0") == std::nullopt);
  CHECK(edit_rules::decimal_product("0.5", "0.2") == "0.1");
}

TEST_CASE("issue 39: state-set's operators: n-=1 is n -= 1, |= is exit 2, never a member named \"n-\"",
          "[edit_rules]") {
  Edit e = parse_assignment("iteration-=1");
  CHECK(e.op == Edit::subtract);
  CHECK(e.path.text == "iteration");
  CHECK(e.path.segments.back().name == "iteration");
  CHECK(parse_assignment("total/=2").op == Edit::divide);
  CHECK(parse_assignment("n%=2").op == Edit::remainder);
  CHECK(parse_assignment("n*=2").op == Edit::multiply);
  CHECK(parse_assignment("n*={\"a\":1}").op == Edit::merge);
  CHECK(parse_assignment("c//=null").op == Edit::alternative);
  CHECK(parse_assignment("history.bd-1.status=x").path.segments[1].name == "bd-1");
  CHECK(parse_assignment("[\"x-\"]=1").path.segments[0].name == "x-");
  for (const char* bad : {"x|=1", "x^=1", "created_at//=now", "x-=a", "l[]-=1", "-=1", "x--=1"}) {
    Exit code = Exit::ok;
    try {
      parse_assignment(bad);
    } catch (const Error& err) {
      code = err.code();
    }
    CHECK(code == Exit::usage);
  }
  json::value doc = json::parse(R"({"n":7,"f":false,"s":"x"})", "doc");
  reference::edit_value(doc, parse_assignment("n-=2"));
  reference::edit_value(doc, parse_assignment("f//=1"));
  reference::edit_value(doc, parse_assignment("s//=1"));
  CHECK(json::compact(doc) == R"({"n":5,"f":1,"s":"x"})");
}
