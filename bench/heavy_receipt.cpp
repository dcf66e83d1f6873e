// receiptd-heavy-receipt: what bench/admission uploads beside small uploads — a
// unified receipt of N in-app purchases (about 1 MB of upload at 2,000, the most
// store-a.max-in-app-purchases lets through), signed by a test PKI made here
// (tests/support/crypto), as an upload body; and that PKI's root, which receiptd
// must trust (store-a.trust-roots). Not a test: bench/admission runs it.
//
//   receiptd-heavy-receipt --bundle-id=B --purchases=2000 --body=FILE --root=FILE
//     [--forged=FILE [--forged-count=1]]   also receipts of the same size signed by a
//     PKI nobody trusts (402), one body per line, each with transaction ids of its
//     own: distinct forgeries (bench/chaos abuse)
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <string>

#include "model/encoding.hpp"
#include "tests/support/crypto/test_ca.hpp"

namespace ts = receiptd::test_support;

namespace {

std::string receipt_body(const std::string& bundle, int purchases, const ts::test_pki& pki,
                         const std::string& id_prefix) {
  ts::unified_receipt_params p;
  p.bundle_id = bundle;
  for (int i = 0; i < purchases; ++i)
    p.in_app.push_back(ts::purchase(bundle + ".product." + std::to_string(i % 50),
                                    id_prefix + std::to_string(1000000 + i),
                                    ts::utc(2024, 5, 1) + i * 60000LL));
  auto der = ts::make_unified_receipt(p, ts::apple_like_signer(pki));
  return "{\"receipt\":\"" + receiptd::model::base64_encode(der) + "\"}";
}

// Writes one line per text that make(i) returns, i from 0 to count - 1.
template <typename Make> void write(const std::string& path, int count, Make make) {
  std::ofstream out(path, std::ios::binary);
  for (int i = 0; i < count && out; ++i)
    out << make(i) << "\n";
  if (!out) {
    std::cerr << "receiptd-heavy-receipt: cannot write " << path << "\n";
    std::exit(1);
  }
}

} // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto eq = a.find('=');
    if (a.rfind("--", 0) != 0 || eq == std::string::npos) {
      std::cerr << "usage: receiptd-heavy-receipt --bundle-id=B --purchases=N --body=FILE "
                   "--root=FILE [--forged=FILE [--forged-count=N]]\n";
      return 2;
    }
    args[a.substr(2, eq - 2)] = a.substr(eq + 1);
  }
  for (auto required : {"bundle-id", "purchases", "body", "root"})
    if (!args.count(required)) {
      std::cerr << "receiptd-heavy-receipt: --" << required << " is required\n";
      return 2;
    }
  const auto bundle = args["bundle-id"];
  const int purchases = std::atoi(args["purchases"].c_str());
  auto pki = ts::make_test_pki({"receiptd bench"});
  write(args["root"], 1, [&](int) { return pki.root.pem(); });
  write(args["body"], 1, [&](int) { return receipt_body(bundle, purchases, pki, "7"); });
  if (args.count("forged")) {
    auto nobody = ts::make_test_pki({"nobody"});
    // Transaction ids "8" + i + a seven-digit number: no two receipts share one.
    write(args["forged"], args.count("forged-count") ? std::atoi(args["forged-count"].c_str()) : 1,
          [&](int i) { return receipt_body(bundle, purchases, nobody, "8" + std::to_string(i)); });
  }
  return 0;
}
