// fmt's implementation, compiled once for the whole build.
//
// Header-only fmt (FMT_HEADER_ONLY) compiles the formatting engine into every
// translation unit that includes <fmt/format.h>: 1.4 s more per file at -O0
// and 2.7 s at -O2 on the machines we build on, times the ~150 files of the
// build (a student's first `./cudalab test` waited minutes for it). This file
// is what fmt's own src/format.cc is for fmt 9: the implementation and its
// explicit instantiations. It is compiled from the headers alone, so a GPU host
// without libfmt's shared library (docs/gpu-host.md) links it statically too,
// and no binary needs a library path at run time.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;

#ifndef FMT_STATIC_THOUSANDS_SEPARATOR
template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;
#endif

template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API void buffer<char>::append(const char*, const char*);
template FMT_API void vformat_to(buffer<char>&, string_view, basic_format_args<FMT_BUFFER_CONTEXT(char)>,
                                 locale_ref);

template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;
template FMT_API void buffer<wchar_t>::append(const wchar_t*, const wchar_t*);

}  // namespace detail
FMT_END_NAMESPACE
