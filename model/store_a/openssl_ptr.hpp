#pragma once
// RAII for the OpenSSL objects Store A touches (internal to model/store_a and the
// test generator). Every owning pointer is a unique_ptr with the matching free.

#include <memory>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

namespace receiptd::model::store_a::ossl {

template <auto free_fn>
struct deleter {
  template <class T>
  void operator()(T* p) const noexcept {
    free_fn(p);
  }
};

struct x509_stack_deleter {
  void operator()(STACK_OF(X509) * s) const noexcept { sk_X509_pop_free(s, X509_free); }
};

using bio_ptr = std::unique_ptr<BIO, deleter<BIO_free_all>>;
using x509_ptr = std::unique_ptr<X509, deleter<X509_free>>;
using x509_stack_ptr = std::unique_ptr<STACK_OF(X509), x509_stack_deleter>;
using x509_store_ptr = std::unique_ptr<X509_STORE, deleter<X509_STORE_free>>;
using x509_store_ctx_ptr = std::unique_ptr<X509_STORE_CTX, deleter<X509_STORE_CTX_free>>;
using evp_pkey_ptr = std::unique_ptr<EVP_PKEY, deleter<EVP_PKEY_free>>;
using evp_md_ptr = std::unique_ptr<EVP_MD, deleter<EVP_MD_free>>;
using evp_md_ctx_ptr = std::unique_ptr<EVP_MD_CTX, deleter<EVP_MD_CTX_free>>;

// OpenSSL records failures in a per-thread error queue. Parsing hostile bytes
// fills it; a guard clears it on every exit so a worker thread never carries a
// stale error into its next receipt.
class error_queue_guard {
public:
  error_queue_guard() = default;
  error_queue_guard(const error_queue_guard&) = delete;
  error_queue_guard& operator=(const error_queue_guard&) = delete;
  ~error_queue_guard() { ERR_clear_error(); }
};

// Runs a verification on OpenSSL with the error queue guarded. An exception
// (bad_alloc, an allocation OpenSSL could not make) is a failure of ours that
// says nothing about the input: never a fraud verdict, the result
// says internal_error. `fault_for_tests` is the test seam: called inside.
template <class Verification, class Verify>
Verification guarded_verification(void (*fault_for_tests)(), Verify&& verify) {
  error_queue_guard guard;
  try {
    if (fault_for_tests != nullptr)
      fault_for_tests();
    return verify();
  } catch (...) {
    Verification out;
    out.internal_error = true;
    out.detail = "internal error during verification";
    return out;
  }
}

} // namespace receiptd::model::store_a::ossl
