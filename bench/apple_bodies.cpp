// receiptd-apple-bodies: the Store A upload bodies of bench/load --kind=transaction|receipt,
// signed once by a test PKI made here (tests/support/crypto) and kept with them. Not a
// test: bench/load runs it.
//
//   receiptd-apple-bodies transactions --bundle-id=B --product=P --count=N --out=FILE
//                         --pki=FILE --root=FILE [--threads=2]
//     N bodies {"signed_transaction":"<JWS>"}, one per line: StoreKit 2 transactions
//     (Transaction.jwsRepresentation) of a Consumable, each with its own transactionId
//     (= originalTransactionId, 2000000000000000 + line), environment Production, ES256
//     with x5c [leaf, intermediate, root] of an Apple-shaped EC chain. --pki gets that
//     chain with the leaf's key (test_support::jws_pki_pem): the emulator signs its
//     Server API answers with it (--server-api-pki); --root gets its root, which
//     receiptd must trust (store-a.trust-roots).
//
//   receiptd-apple-bodies receipts --bundle-id=B --product=P --count=N --out=FILE
//                         --root=FILE [--threads=2]
//     N bodies {"receipt":"<base64>"}: unified receipts (receipt type Production), each
//     with one in-app purchase of P with its own transaction id, PKCS#7-signed by an
//     Apple-shaped RSA-2048 chain (leaf and intermediate embedded, as Apple's); --root
//     gets its root, which receiptd must trust (store-a.trust-roots).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "model/encoding.hpp"
#include "tests/support/crypto/test_ca.hpp"
#include "tests/support/crypto/test_jws.hpp"

namespace ts = receiptd::test_support;

namespace {

constexpr long long first_transaction_id = 2000000000000000LL;

// Writes make(i) for i in [0, count), one per line, computed on `threads` threads;
// through a temporary file, so that a file by that name is always whole.
bool write_lines(const std::string& path, std::size_t count, unsigned threads,
                 const std::function<std::string(std::size_t)>& make) {
  std::vector<std::string> lines(count);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (std::size_t i = t; i < count; i += threads)
        lines[i] = make(i);
    });
  for (auto& th : pool)
    th.join();
  std::ofstream out(path + ".tmp", std::ios::binary);
  for (const auto& l : lines)
    out << l << '\n';
  out.close();
  return out && std::rename((path + ".tmp").c_str(), path.c_str()) == 0;
}

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path + ".tmp", std::ios::binary);
  out << text;
  out.close();
  return out && std::rename((path + ".tmp").c_str(), path.c_str()) == 0;
}

} // namespace

int main(int argc, char** argv) {
  const std::string usage
    = "usage: receiptd-apple-bodies transactions|receipts --bundle-id=B --product=P --count=N "
      "--out=FILE [--pki=FILE] --root=FILE [--threads=2]\n";
  if (argc < 2) {
    std::cerr << usage;
    return 2;
  }
  const std::string what = argv[1];
  std::map<std::string, std::string> args;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto eq = a.find('=');
    if (a.rfind("--", 0) != 0 || eq == std::string::npos) {
      std::cerr << usage;
      return 2;
    }
    args[a.substr(2, eq - 2)] = a.substr(eq + 1);
  }
  if (what != "transactions" && what != "receipts") {
    std::cerr << usage;
    return 2;
  }
  for (auto required : {"bundle-id", "product", "count", "out", "root",
                        what == "transactions" ? "pki" : "root"})
    if (!args.count(required)) {
      std::cerr << "receiptd-apple-bodies: --" << required << " is required\n";
      return 2;
    }
  const auto bundle = args["bundle-id"], product = args["product"], out = args["out"];
  const auto count = static_cast<std::size_t>(std::stoull(args["count"]));
  const unsigned threads
    = args.count("threads") ? static_cast<unsigned>(std::stoul(args["threads"])) : 2U;

  bool ok = false;
  if (what == "transactions") {
    const auto pki = ts::make_jws_pki("receiptd bench");
    ok = write_text(args["pki"], ts::jws_pki_pem(pki)) && write_text(args["root"], pki.root.pem())
      && write_lines(out, count, threads, [&](std::size_t i) {
           ts::transaction_fields t;
           t.transaction_id = t.original_transaction_id
             = std::to_string(first_transaction_id + static_cast<long long>(i));
           t.bundle_id = bundle;
           t.product_id = product;
           t.type = "Consumable";
           t.environment = "Production";
           t.purchase_date = t.original_purchase_date = ts::utc(2025, 6, 1, 12) + 1000LL * i;
           t.signed_date = t.purchase_date + 5000;
           return "{\"signed_transaction\":\""
             + ts::make_storekit_jws(ts::transaction_payload_json(t), pki) + "\"}";
         });
  } else {
    const auto pki = ts::make_test_pki({"receiptd bench receipts"});
    const auto signer = ts::apple_like_signer(pki);
    ok = write_text(args["root"], pki.root.pem())
      && write_lines(out, count, threads, [&](std::size_t i) {
           ts::unified_receipt_params p;
           p.bundle_id = bundle;
           p.receipt_type = "Production";
           const auto at = ts::utc(2025, 6, 1, 12) + 1000LL * static_cast<long long>(i);
           p.creation_date = at + 5000;
           p.in_app.push_back(ts::purchase(
             product, std::to_string(first_transaction_id + static_cast<long long>(i)), at));
           return "{\"receipt\":\""
             + receiptd::model::base64_encode(ts::make_unified_receipt(p, signer)) + "\"}";
         });
  }
  if (!ok) {
    std::cerr << "receiptd-apple-bodies: cannot write " << out << "\n";
    return 1;
  }
  return 0;
}
